/**
 * The delivery queue: the cap on attempts in flight over all hosts, the start rate per host, first come
 * first served in both. On vitest's fake timers (the queue does no I/O): starts are timed to the millisecond,
 * and no test waits for real time.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeliveryQueue } from '../../src/webhooks/delivery-queue.js';

/** A task that records when it started and ends when `release` is called. */
function held(log: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { task: () => (log.push(name), done.then(() => name)), release: () => release() };
}

describe('DeliveryQueue', () => {
  let queue: DeliveryQueue | undefined;
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    queue?.close();
    vi.useRealTimers();
  });

  /** Lets the fake time run `ms` on, then answers what `work` resolved to. */
  async function after<T>(ms: number, work: Promise<T>): Promise<T> {
    await vi.advanceTimersByTimeAsync(ms);
    return work;
  }

  it('runs at most `concurrency` attempts at once, the others in order as slots free up', async () => {
    queue = new DeliveryQueue({ concurrency: 2, hostRatePerSecond: 1_000_000 });
    const started: string[] = [];
    const tasks = ['a', 'b', 'c', 'd'].map((name, i) => held(started, `${name}${i}`));
    const results = tasks.map((t, i) => queue!.run(`host-${i % 2}:80`, t.task));
    await vi.advanceTimersByTimeAsync(10);
    expect(started).toEqual(['a0', 'b1']);
    tasks[1].release();
    await vi.advanceTimersByTimeAsync(10);
    expect(started).toEqual(['a0', 'b1', 'c2']);
    tasks[0].release();
    tasks[2].release();
    tasks[3].release();
    expect(await Promise.all(results)).toEqual(['a0', 'b1', 'c2', 'd3']);
  });

  it('starts at most the host rate per second, spread over the second; other hosts are not held up', async () => {
    queue = new DeliveryQueue({ concurrency: 100, hostRatePerSecond: 5 });
    const starts: number[] = [];
    const began = Date.now();
    const slow = Array.from({ length: 8 }, () => queue!.run('slow:80', async () => starts.push(Date.now() - began)));
    const other = await (async () => {
      await queue.run('other:80', async () => undefined);
      return Date.now() - began;
    })();
    await after(2_000, Promise.all(slow));
    expect(other).toBe(0);
    // 5 a second: five at once, the next three when the second is over.
    expect(starts).toEqual([0, 0, 0, 0, 0, 1_000, 1_000, 1_000]);
  });

  it('keeps to a rate that is not a multiple of ten', async () => {
    queue = new DeliveryQueue({ concurrency: 1_000, hostRatePerSecond: 15 });
    const began = Date.now();
    const starts: number[] = [];
    await after(
      3_000,
      Promise.all(Array.from({ length: 24 }, () => queue!.run('h:80', async () => starts.push(Date.now() - began)))),
    );
    // 2 every 133 ms (15 a second), not 2 every 100 ms (20 a second): the last two start after 11 windows.
    expect(Math.max(...starts)).toBeGreaterThanOrEqual(1_400);
    expect(Math.max(...starts)).toBeLessThan(2_000);
  });

  it('keeps to a high host rate per tenth of a second', async () => {
    queue = new DeliveryQueue({ concurrency: 1_000, hostRatePerSecond: 100 });
    const began = Date.now();
    const starts: number[] = [];
    await after(
      1_000,
      Promise.all(Array.from({ length: 25 }, () => queue!.run('h:80', async () => starts.push(Date.now() - began)))),
    );
    expect(starts.filter((ms) => ms < 90)).toHaveLength(10);
    expect(starts.filter((ms) => ms >= 190)).toHaveLength(5);
  });
});
