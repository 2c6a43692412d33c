/**
 * store: durable single-event appends to the embedded SQLite event store (WAL, synchronous=FULL, group
 * commit) from many concurrent callers, against a baseline of one-row FULL commits done one at a time.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { ExpectedRevision } from '../src/eventstore/event-store.js';
import { SCHEMA } from '../src/eventstore/sqlite/schema.js';
import { SqliteEventStore } from '../src/eventstore/sqlite/sqlite-event-store.js';
import type { Metric } from './lib/benchmark.js';
import { type ClosedLoopResult, closedLoop } from './lib/closed-loop.js';
import { ratio, round, summarize } from './lib/stats.js';
import { makeTempDir } from './lib/temp.js';

export const name = 'store';
export const description =
  'SQLite event store: durable single-event appends from 50 concurrent callers vs one-at-a-time FULL commits';

const CALLERS = 50;
/** The measured run stops at this many events or after MAX_SECONDS, whichever comes first. */
const EVENTS = 100_000;
const MAX_SECONDS = 5;
const WARMUP_EVENTS = 2_000;
const BASELINE_SECONDS = 2;
const BASELINE_MAX_COMMITS = 100_000;

/** A payload the size of a typical domain event. */
const DATA = {
  deviceId: 'bench-device',
  messageId: '3EB0C431C26A1916E6B2',
  to: '4915112345678',
  text: 'x'.repeat(120),
};

export async function run(): Promise<Metric[]> {
  const dir = makeTempDir('store');
  try {
    const store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    let measured: ClosedLoopResult;
    try {
      await appendLoad(store, 'warmup', WARMUP_EVENTS);
      measured = await appendLoad(store, 'bench', EVENTS);
    } finally {
      await store.close();
    }
    const baseline = baselineCommits(join(dir.path, 'baseline.sqlite'), BASELINE_SECONDS);
    const latency = summarize(measured.latenciesMs);
    return [
      {
        metric: `appends, ${CALLERS} concurrent callers`,
        value: round(measured.perSecond, 0),
        unit: 'events/s',
        target: { op: '>=', value: 20_000 },
      },
      { metric: 'append latency p50', value: round(latency.p50), unit: 'ms' },
      { metric: 'append latency p99', value: round(latency.p99), unit: 'ms' },
      { metric: 'events appended', value: measured.operations, unit: 'events' },
      {
        metric: 'baseline: 1-row FULL commits, one at a time',
        value: round(baseline.commitsPerSecond, 0),
        unit: 'events/s',
      },
      {
        metric: 'group commit speed-up vs baseline',
        value: round(ratio(measured.perSecond, baseline.commitsPerSecond), 1),
        unit: 'x',
      },
    ];
  } finally {
    dir.remove();
  }
}

/** Each caller appends one event at a time to its own stream, with the revision it expects (as command handlers do). */
function appendLoad(store: SqliteEventStore, streamPrefix: string, operations: number): Promise<ClosedLoopResult> {
  return closedLoop({ callers: CALLERS, operations, maxSeconds: MAX_SECONDS }, (index) => {
    const stream = `${streamPrefix}-${index}`;
    let expectedRevision: ExpectedRevision = 'no_stream';
    return async () => {
      const result = await store.append(stream, [{ type: 'BenchEvent', data: DATA }], { expectedRevision });
      expectedRevision = result.nextExpectedRevision;
    };
  });
}

/** Plain better-sqlite3 with the store's schema and pragmas: one autocommitted INSERT (one fsync) per event. */
function baselineCommits(file: string, seconds: number): { commits: number; commitsPerSecond: number } {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(SCHEMA);
    const insert = db.prepare(
      'INSERT INTO events (stream_id, revision, event_id, type, data, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    const payload = JSON.stringify(DATA);
    const started = performance.now();
    const deadline = started + seconds * 1000;
    let commits = 0;
    while (commits < BASELINE_MAX_COMMITS && performance.now() < deadline) {
      insert.run('baseline', commits, `baseline-${commits}`, 'BenchEvent', payload, '{}', Date.now());
      commits += 1;
    }
    const elapsed = (performance.now() - started) / 1000;
    return { commits, commitsPerSecond: commits / elapsed };
  } finally {
    db.close();
  }
}
