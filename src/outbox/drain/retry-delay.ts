/** Backoff between tries of one message: base × 2^(n-1), capped, moved by up to ±20 % so devices do not retry in step. */
export function retryDelayMs(
  failures: number,
  settings: { retryBaseDelayMs: number; retryMaxDelayMs: number },
  random: () => number = Math.random,
): number {
  const nominal = Math.min(settings.retryBaseDelayMs * 2 ** Math.max(0, failures - 1), settings.retryMaxDelayMs);
  return Math.max(0, Math.round(nominal * (0.8 + 0.4 * random())));
}
