/** The retry spool on its own: order, retries, the bound, and what it gives up. */
import { describe, expect, it } from 'vitest';
import { EventSpool } from '../../src/actors/event-spool.js';
import { StoreUnavailableError } from '../../src/eventstore/event-store.js';
import { eventually } from '../support/eventually.js';

const SETTINGS = { capacity: 3, baseDelayMs: 1, maxDelayMs: 5, maxOtherFailures: 2 };

function recorder() {
  const calls: string[] = [];
  const events = {
    blocked: () => void calls.push('blocked'),
    drained: () => void calls.push('drained'),
    givenUp: (what: string) => void calls.push(`givenUp ${what}`),
  };
  return { calls, events };
}

describe('the event spool', () => {
  it('retries a refused write until the store takes it, keeping the order, and waits for room when full', async () => {
    const { calls, events } = recorder();
    const spool = new EventSpool('dev', events, SETTINGS);
    const written: number[] = [];
    let down = true;
    const write = (n: number) => async () => {
      if (down) throw new StoreUnavailableError('append failed: database or disk is full');
      written.push(n);
    };
    const done = [1, 2, 3, 4, 5].map((n) => spool.write(`r${n}`, write(n)));
    await eventually(() => calls.includes('blocked'), 'blocked');
    // The bound: three held, the other two wait for room.
    expect(spool.size).toBe(3);
    down = false;
    await Promise.all(done);
    expect(written).toEqual([1, 2, 3, 4, 5]);
    expect(calls).toEqual(['blocked', 'drained']);
    expect(spool.size).toBe(0);
  });

  it('refuses a write without retry while blocked, and gives up a write that fails for another reason', async () => {
    const { calls, events } = recorder();
    const spool = new EventSpool('dev', events, SETTINGS);
    let down = true;
    const held = spool.write('held', async () => {
      if (down) throw new StoreUnavailableError('store down');
    });
    await eventually(() => spool.blocked, 'blocked');
    await expect(spool.write('once', async () => undefined, { retry: false })).rejects.toThrow('store down');
    down = false;
    await held;
    await expect(spool.write('bug', async () => Promise.reject(new TypeError('not a store failure')))).rejects.toThrow(
      TypeError,
    );
    expect(calls).toContain('givenUp bug');
  });

  it('close refuses what is still held', async () => {
    const { events } = recorder();
    const spool = new EventSpool('dev', events, SETTINGS);
    const held = spool.write('held', () => Promise.reject(new StoreUnavailableError('store down')));
    await eventually(() => spool.blocked, 'blocked');
    expect(spool.close()).toEqual([{ what: 'held' }]);
    await expect(held).rejects.toMatchObject({ code: 'shutting_down' });
  });
});
