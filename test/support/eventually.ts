/**
 * The suite's wait for a condition: polls `check` until it returns a value other than `undefined` or `false`, and
 * resolves with that value; a throw counts as "not yet" too. Fails after `timeoutMs` naming `what` (and the last
 * throw). A deadline, not a timing assertion. Wait for a condition, then assert: an `expect(...)` is typed to return
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

/**
 * Waits while a backlog drains at whatever pace the machine allows: reads `left` every `everyMs` until its `size` is
 * 0, and fails only once it has not shrunk for `stallMs`, with the error `stalled` makes of what is left. For chaos
 * runs over child processes, where a fixed deadline fails a slow machine or waits long for a message stuck for good.
 */
export async function whileProgressing<T>(
  left: () => T | Promise<T>,
  size: (left: T) => number,
  stalled: (left: T) => Error | Promise<Error>,
  { everyMs = 500, stallMs = 30_000 } = {},
): Promise<void> {
  let now = await left();
  for (let progressAt = Date.now(); size(now) > 0;) {
    if (Date.now() - progressAt > stallMs) throw await stalled(now);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
    const next = await left();
    if (size(next) < size(now)) progressAt = Date.now();
    now = next;
  }
}
