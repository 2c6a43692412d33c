/**
 * rebuild: a log of 1,000,000 events (1,000 devices sending and receiving), every read model rebuilt from
 * position 0, against reading the same log with no read model in the same run (the machine is shared); then the
 * gateway started on that data with its checkpoints in place, timed to a healthy /health, against the same start on
 * an empty log (startup must not grow with history); and started once more with its read models gone, which it builds
 * from the log before it answers (a read model's new version, a new machine: src/projections/bulk-writes.ts).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { pino } from 'pino';
import { deviceStream } from '../src/devices/device-events.js';
import type { NewEvent } from '../src/eventstore/event-store.js';
import { SQLITE_STORE_FILE } from '../src/eventstore/open-event-store.js';
import { withCurrentSchemas } from '../src/event-schemas.js';
import { SqliteEventStore } from '../src/eventstore/sqlite/sqlite-event-store.js';
import { outboxStream } from '../src/messages/message-events.js';
import { inboxStream } from '../src/inbox/inbox-events.js';
import type { Projection } from '../src/projections/projection.js';
import { READ_MODEL_FILE } from '../src/projections/read-model-db.js';
import { rebuildReadModelFile, removeWithCompanions } from '../src/projections/read-model-file-rebuild.js';
import { allProjections } from '../src/read-models.js';
import { sessionStream } from '../src/sessions/session-events.js';
import type { Metric } from './lib/benchmark.js';
import { spawnServer } from './lib/child.js';
import { type LogEvent, writeLogDirect } from './lib/event-log.js';
import { round } from './lib/stats.js';
import { makeTempDir } from './lib/temp.js';

export const name = 'rebuild';
export const description =
  'Full rebuild of every read model from a 1,000,000-event log, and gateway start-up time with checkpoints in place';

const DEVICES = 1_000;
/** BENCH_REBUILD_EVENTS: a smaller log for quick before/after profiles (bench/profile-rebuild.ts). */
const TARGET_EVENTS = Number(process.env.BENCH_REBUILD_EVENTS ?? 1_000_000);
/** Per device and round: queued, sending, sent, delivered, read on the outbox; one received on the inbox. */
const EVENTS_PER_ROUND = 6;

export async function run(): Promise<Metric[]> {
  const full = makeTempDir('rebuild');
  const empty = makeTempDir('rebuild-empty');
  try {
    const written = await writeHistory(full.path);
    // The baseline of this run: the same pass over the log with no read model fed (read and decode only).
    const readOnly = await rebuildAll(full.path, []);
    const rebuild = await rebuildAll(full.path);
    const withHistory = await timeToHealthy(full.path);
    const withoutHistory = await timeToHealthy(empty.path);
    removeWithCompanions(join(full.path, READ_MODEL_FILE));
    const withoutReadModels = await timeToHealthy(full.path);
    return [
      { metric: 'events in the log', value: written, unit: 'events' },
      {
        metric: 'full rebuild, every read model',
        value: Math.round(written / rebuild.seconds),
        unit: 'events/s',
        target: { op: '>=', value: 150_000 },
      },
      { metric: 'full rebuild time', value: round(rebuild.seconds, 2), unit: 's' },
      {
        metric: 'log read and decoded, no read model (same run)',
        value: Math.round(written / readOnly.seconds),
        unit: 'events/s',
      },
      { metric: 'full rebuild / log read alone', value: round(readOnly.seconds / rebuild.seconds, 3), unit: '×' },
      {
        metric: 'start → healthy, 1M events, checkpoints in place',
        value: round(withHistory, 2),
        unit: 's',
        target: { op: '<=', value: 3 },
      },
      { metric: 'start → healthy, empty log (same run)', value: round(withoutHistory, 2), unit: 's' },
      {
        metric: 'start → healthy, 1M events, no read models (built at start)',
        value: round(withoutReadModels, 2),
        unit: 's',
      },
      { metric: 'that start / full rebuild time', value: round(withoutReadModels / rebuild.seconds, 2), unit: '×' },
    ];
  } finally {
    full.remove();
    empty.remove();
  }
}

/**
 * Writes the log straight into the store's tables in large transactions (bench/lib/event-log.ts): the same
 * events a busy gateway would have appended, in the order it would have appended them.
 */
export async function writeHistory(dataDir: string): Promise<number> {
  return writeLogDirect(dataDir, historyEvents());
}

function* historyEvents(): Generator<LogEvent> {
  const ids = Array.from({ length: DEVICES }, (_, i) => `bench-${String(i).padStart(4, '0')}`);
  for (const deviceId of ids) {
    yield {
      streamId: deviceStream(deviceId),
      type: 'DeviceCreated',
      data: { deviceId, name: deviceId, engine: 'sandbox', metadata: {}, keyHash: randomBytes(32).toString('hex') },
    };
    const session = sessionStream(deviceId);
    yield {
      streamId: session,
      type: 'SessionStateChanged',
      data: { deviceId, state: 'qr', previousState: 'closed', reason: 'opened' },
    };
    yield {
      streamId: session,
      type: 'SessionStateChanged',
      data: { deviceId, state: 'connecting', previousState: 'qr', reason: 'scanned' },
    };
    yield {
      streamId: session,
      type: 'SessionStateChanged',
      data: { deviceId, state: 'online', previousState: 'connecting', phone: phoneOf(deviceId), reason: 'connected' },
    };
  }
  let written = DEVICES * 4;
  for (let round = 0; written < TARGET_EVENTS; round++) {
    for (let d = 0; d < DEVICES; d++) {
      const deviceId = ids[d];
      for (const event of outboxRound(deviceId, d, round))
        yield { streamId: outboxStream(deviceId), type: event.type, data: event.data };
      const received = inbound(deviceId, d, round);
      yield { streamId: inboxStream(deviceId), type: received.type, data: received.data };
    }
    written += DEVICES * EVENTS_PER_ROUND;
  }
}

const phoneOf = (deviceId: string) => `4915${deviceId.slice(-4).padStart(8, '0')}`;
const recipientOf = (d: number, round: number) => `4930${String((d * 7 + round) % 5_000).padStart(7, '0')}`;

function outboxRound(deviceId: string, d: number, round: number): NewEvent[] {
  const outboxId = `ob_${deviceId}_${round}`;
  const waMessageId = `3EB0${d.toString(16).padStart(4, '0')}${round.toString(16).padStart(14, '0')}`.toUpperCase();
  const to = recipientOf(d, round);
  const timestamp = 1_790_000_000 + round;
  const status = (s: 'sent' | 'delivered' | 'read') => ({
    type: 'MessageStatusChanged',
    data: { deviceId, waMessageId, status: s, recipient: to, outboxId, timestamp },
  });
  return [
    {
      type: 'OutboxMessageQueued',
      data: {
        deviceId,
        outboxId,
        waMessageId,
        to,
        seq: round + 1,
        content: { kind: 'text', text: `message ${round} from ${deviceId}` },
        createdAt: new Date(timestamp * 1000).toISOString(),
      },
    },
    { type: 'OutboxMessageSending', data: { deviceId, outboxId, waMessageId, attempt: 1 } },
    status('sent'),
    status('delivered'),
    status('read'),
  ];
}

function inbound(deviceId: string, d: number, round: number): NewEvent {
  return {
    type: 'MessageReceived',
    data: {
      deviceId,
      from: recipientOf(d, round),
      type: 'text',
      body: `reply ${round}`,
      timestamp: 1_790_000_000 + round,
      waMessageId: `IN${d}_${round}`,
      pushName: `Contact ${round % 50}`,
    },
  };
}

/**
 * What `npm run rebuild` does: every read model, one pass from position 0, into a fresh file that then replaces the
 * old one. `only` names the read models to feed (profiling one at a time); `[]` feeds none, which times reading the
 * log alone: the baseline a rebuild is compared with in the same run (the machine is shared, its speed varies from run
 * to run).
 */
export async function rebuildAll(dataDir: string, only?: readonly string[]) {
  // As npm run rebuild reads it: the bench's DeviceCreated events are written in their first schema.
  const store = withCurrentSchemas(new SqliteEventStore(join(dataDir, SQLITE_STORE_FILE)));
  const log = pino({ level: 'warn' });
  const projectionsOf = (db: Database.Database) => {
    const projections = allProjections(db, store, log).filter((p) => only === undefined || only.includes(p.name));
    return projections.length > 0 ? projections : [readOnly];
  };
  const started = performance.now();
  const { events } = await rebuildReadModelFile(store, dataDir, READ_MODEL_FILE, projectionsOf, log);
  const seconds = (performance.now() - started) / 1000;
  await store.close();
  return { seconds, events };
}

/** A read model of nothing: the runner reads and decodes every event and applies none. */
const readOnly: Projection = {
  name: 'bench-read-only',
  version: 1,
  handles: new Set(),
  setup() {},
  reset() {},
  apply() {},
};

/** Seconds from spawning the gateway to its first healthy /health. */
async function timeToHealthy(dataDir: string): Promise<number> {
  const started = performance.now();
  const server = await spawnServer({
    name: 'gateway',
    script: 'src/main.ts',
    env: {
      DATA_DIR: dataDir,
      ADMIN_API_KEY: `ak_bench_${randomBytes(16).toString('hex')}`,
      LOG_LEVEL: 'warn',
      DEFAULT_ENGINE: 'sandbox',
    },
    healthPath: '/health',
    startTimeoutMs: 120_000,
  });
  const seconds = (performance.now() - started) / 1000;
  await server.stop();
  return seconds;
}
