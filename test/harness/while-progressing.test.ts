/** whileProgressing (test/support/eventually.ts): the chaos runs' wait for a backlog drained at the machine's pace. */
import { describe, expect, it } from 'vitest';
import { whileProgressing } from '../support/eventually.js';

/** What is left at each read: the sizes given, then the last one for ever. */
function backlog(...sizes: number[]) {
  const read: number[] = [];
  const left = () => {
    const size = sizes[Math.min(read.length, sizes.length - 1)];
    read.push(size);
    return size;
  };
  return { left, read };
}

describe('whileProgressing', () => {
  it('waits while the backlog shrinks, and ends once nothing is left', async () => {
    const { left, read } = backlog(3, 2, 2, 1, 0);
    await whileProgressing(
      left,
      (size) => size,
      () => new Error('stalled'),
      { everyMs: 1, stallMs: 10_000 },
    );
    expect(read).toEqual([3, 2, 2, 1, 0]);
  });

  it('ends at once when nothing was left to begin with', async () => {
    const { left, read } = backlog(0);
    await whileProgressing(
      left,
      (size) => size,
      () => new Error('stalled'),
      { everyMs: 1, stallMs: 10_000 },
    );
    expect(read).toEqual([0]);
  });

  it('fails with what is left once it has not shrunk for the stall time', async () => {
    const { left, read } = backlog(5, 4, 4);
    await expect(
      whileProgressing(
        left,
        (size) => size,
        (size) => new Error(`${size} left`),
        { everyMs: 1, stallMs: 20 },
      ),
    ).rejects.toThrow('4 left');
    // Read again and again meanwhile, never past what it had.
    expect(read.length).toBeGreaterThan(3);
    expect(new Set(read.slice(1))).toEqual(new Set([4]));
  });
});
