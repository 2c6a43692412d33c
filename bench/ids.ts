/**
 * Event ids, made on every append: time-ordered v7 ids (the `uuid` package) and deterministic v5-layout
 * ids (SHA-1), in ids per second on one core. Context for the store figures: an id costs a few µs, a
 * durable append tens.
 */
import { deterministicEventId, orderedUuid } from '../src/eventstore/event-id.js';
import type { Metric } from './lib/benchmark.js';
import { round } from './lib/stats.js';

export const name = 'ids';
export const description = 'event ids: time-ordered (uuid v7) and deterministic (v5 layout), ids/s on one core';

/** The median of several timed rounds of `count` calls, after a warm-up. */
function idsPerSecond(make: (i: number) => string, count: number): number {
  for (let i = 0; i < 50_000; i++) make(i);
  const rates: number[] = [];
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    for (let i = 0; i < count; i++) make(i);
    rates.push(count / ((performance.now() - started) / 1000));
  }
  return rates.sort((a, b) => a - b)[2];
}

export async function run(): Promise<Metric[]> {
  const ordered = idsPerSecond(() => orderedUuid(), 500_000);
  const deterministic = idsPerSecond((i) => deterministicEventId(`device-1/3EB0${i}`), 200_000);
  return [
    { metric: 'time-ordered ids (uuid v7)', value: round(ordered, 0), unit: 'ids/s' },
    { metric: 'deterministic ids (SHA-1, v5 layout)', value: round(deterministic, 0), unit: 'ids/s' },
  ];
}
