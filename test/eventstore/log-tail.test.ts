/**
 * The shared tail of the log (src/eventstore/log-tail.ts): it answers from what it keeps when it holds every
 * event after the reader's position, [] when nothing newer has come, and undefined (read the log) once the
 * events a reader needs were let go; positions need not be consecutive, and a batch handed again is kept once.
 */
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/eventstore/event-store.js';
import { LogTail } from '../../src/eventstore/log-tail.js';
import { storedEvent } from './support/stored-event.js';

const event = (position: number): StoredEvent => storedEvent(position);

const positions = (events: readonly StoredEvent[] | undefined) => events?.map((e) => e.position);

describe('log tail', () => {
  it('answers the events after a position from what it keeps, at most maxCount, [] at the head', () => {
    const tail = new LogTail(10, 100);
    expect(tail.read(10, 5)).toEqual([]);
    tail.add([event(20), event(30), event(40)]);
    tail.add([event(50)]);
    expect(positions(tail.read(10, 10))).toEqual([20, 30, 40, 50]);
    expect(positions(tail.read(20, 2))).toEqual([30, 40]);
    // A position between events (EventStoreDB's commit positions), and one ahead of what came so far.
    expect(positions(tail.read(35, 10))).toEqual([40, 50]);
    expect(tail.read(50, 10)).toEqual([]);
    expect(tail.read(70, 10)).toEqual([]);
    // Before what the subscription started after: the tail never had those.
    expect(tail.read(9, 10)).toBeUndefined();
    expect(tail.head).toBe(50);
  });

  it('keeps at most its capacity: a reader behind what it let go reads the log, one within it does not', () => {
    const tail = new LogTail(0, 3);
    for (let position = 1; position <= 10; position++) tail.add([event(position)]);
    expect(tail.read(6, 10)).toBeUndefined();
    expect(positions(tail.read(7, 10))).toEqual([8, 9, 10]);
    tail.add([11, 12, 13, 14, 15].map(event));
    expect(tail.read(11, 10)).toBeUndefined();
    expect(positions(tail.read(12, 10))).toEqual([13, 14, 15]);
  });

  it('keeps a batch handed again (a subscription made again) once', () => {
    const tail = new LogTail(0, 10);
    tail.add([event(1), event(2)]);
    tail.add([event(2), event(3)]);
    tail.add([event(1)]);
    expect(positions(tail.read(0, 10))).toEqual([1, 2, 3]);
    expect(tail.head).toBe(3);
  });
});
