/**
 * ReadBarrier (src/projections/read-barrier.ts): what a request and a send wait for, given the log's head and how far
 * the read models got.
 */
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { ReadBarrier } from '../../src/projections/read-barrier.js';
import { DevicesReadModel } from '../../src/devices/devices-read-model.js';
import { OUTBOX_EVENT_TYPES } from '../../src/outbox/stream/outbox-events.js';

/** Read models at `position`; each wait asked of them is recorded, and resolves at once. */
function feedAt(position: number, failing = false) {
  const waits: number[] = [];
  return {
    waits,
    feed: {
      position,
      failing,
      settle: async (at: number) => {
        waits.push(at);
        return true;
      },
    },
  };
}

describe('ReadBarrier', () => {
  it('holds a read until the read models include the head of the log, and only while they do not', async () => {
    let head = 10;
    const behind = feedAt(7);
    const barrier = new ReadBarrier({ feed: behind.feed, head: () => head });
    await barrier.beforeRead();
    expect(behind.waits).toEqual([10]);
    behind.feed.position = 10;
    expect(barrier.beforeRead()).toBeUndefined();
    head = 12;
    await barrier.beforeRead();
    expect(behind.waits).toEqual([10, 12]);
  });

  it('answers a send at once while the read models are within the lag limit of it, else waits until they are', async () => {
    const at = feedAt(100);
    const barrier = new ReadBarrier({ feed: at.feed, head: () => 0, lagLimit: 50 });
    expect(barrier.afterSend(150)).toBeUndefined();
    await barrier.afterSend(151);
    expect(at.waits).toEqual([101]);
  });

  it('without a head, a send waits for the read models to include it and a read waits for nothing', async () => {
    const at = feedAt(5);
    const barrier = new ReadBarrier({ feed: at.feed });
    expect(barrier.beforeRead()).toBeUndefined();
    await barrier.afterSend(6);
    expect(at.waits).toEqual([6]);
  });

  it('does not hold reads while the read models cannot be written: they answer what they hold', () => {
    const failing = feedAt(5, true);
    const barrier = new ReadBarrier({ feed: failing.feed, head: () => 9 });
    expect(barrier.beforeRead()).toBeUndefined();
    expect(failing.waits).toEqual([]);
  });

  it('leaves out only what no send changes: GET /devices and /devices/:id read the devices read model as it is', () => {
    const handled = [...new DevicesReadModel(new Database(':memory:')).handles];
    expect(handled.filter((type) => OUTBOX_EVENT_TYPES.has(type))).toEqual([]);
  });
});
