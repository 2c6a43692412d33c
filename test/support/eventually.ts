/**
 * The suite's one wait: polls `check` until it returns a value other than `undefined` or `false`, and resolves
 * with that value; a throw counts as "not yet" too. Fails after `timeoutMs` naming `what` (and the last throw).
 * A deadline, not a timing assertion. Wait for a condition, then assert: an `expect(...)` is typed to return
 * nothing, so it makes no check here.
 */
export async function eventually<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what = 'condition',
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
