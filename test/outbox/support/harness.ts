/**
 * Test support for the outbox: a real SQLite store and outboxes, a drainer whose engine connections
 * the test controls (WhatsApp itself cannot run here), and helpers to read what was recorded.
 */
import type { LookupFunction } from 'node:net';
import { join } from 'node:path';
import PQueue from 'p-queue';
import { pino } from 'pino';
import { vi } from 'vitest';
import type { MediaSettings, OutboxSettings } from '../../../src/config.js';
import { EngineError, type EngineConnection, type OutgoingMessage } from '../../../src/engines/engine.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import type { EventStore } from '../../../src/eventstore/event-store.js';
import { MediaFetcher } from '../../../src/media/media-fetcher.js';
import { MediaStore } from '../../../src/media/media-store.js';
import { outboxStream } from '../../../src/messages/message-events.js';
import { OutboundGuard } from '../../../src/net/outbound-guard.js';
import type { DeviceConnections, SessionStateListener } from '../../../src/outbox/drain/device-connections.js';
import { MessageDispatcher } from '../../../src/outbox/drain/message-dispatcher.js';
import { type DeviceFences, OutboxDrainer, type OutboxDrainerDeps } from '../../../src/outbox/drain/outbox-drainer.js';
import type { OutboxEvent, QueuedContent } from '../../../src/outbox/stream/outbox-events.js';
import { Outboxes } from '../../../src/outbox/stream/outboxes.js';
import { newWaMessageId } from '../../../src/messages/message-id.js';
import { tempDir } from '../../support/temp-dir.js';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../../src/time/clock.js';

export const silent = pino({ level: 'silent' });

/** What a FakeConnection does with the next send: succeed, throw, or wait for the test. */
export type SendOutcome = 'ok' | Error | Promise<void>;

export class FakeConnection implements EngineConnection {
  readonly sent: OutgoingMessage[] = [];
  readonly sentAt: number[] = [];
  readonly revoked: string[] = [];
  /** Consumed one per send; when empty, sends succeed. */
  readonly script: SendOutcome[] = [];

  async send(message: OutgoingMessage): Promise<void> {
    this.sent.push(message);
    this.sentAt.push(Date.now());
    const outcome = this.script.shift() ?? 'ok';
    if (outcome instanceof Error) throw outcome;
    if (outcome !== 'ok') await outcome;
  }
  async revoke(waMessageId: string): Promise<void> {
    const outcome = this.script.shift() ?? 'ok';
    if (outcome instanceof Error) throw outcome;
    this.revoked.push(waMessageId);
  }
  async checkNumber(number: string) {
    return { exists: true, jid: `${number}@s.whatsapp.net` };
  }
  async avatarUrl() {
    return null;
  }
  async close() {}
  async logout() {}
}

/** Devices go online and offline as the test says. */
export class FakeConnections implements DeviceConnections {
  private readonly live = new Map<string, EngineConnection>();
  private readonly listeners = new Set<SessionStateListener>();

  connection(deviceId: string): EngineConnection | undefined {
    return this.live.get(deviceId);
  }
  onStateChange(listener: SessionStateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  online(deviceId: string, connection: EngineConnection): void {
    this.live.set(deviceId, connection);
    for (const listener of this.listeners) listener(deviceId, 'online');
  }
  offline(deviceId: string): void {
    this.live.delete(deviceId);
    for (const listener of this.listeners) listener(deviceId, 'reconnecting');
  }
}

export const transient = (message = 'the server hiccuped') => new EngineError('engine_error', message);
export const notConnected = () => new EngineError('not_connected', 'not online');

export const OUTBOX_TEST_SETTINGS: OutboxSettings = {
  ratePerMinute: 100_000,
  spacingMaxMs: 0,
  maxAttempts: 3,
  retryBaseDelayMs: 20,
  retryMaxDelayMs: 100,
};
export const MEDIA_TEST_SETTINGS: MediaSettings = {
  maxBytes: 64 * 1024,
  fileMaxBytes: 128 * 1024,
  fetchTimeoutMs: 5_000,
};

export interface Harness {
  dir: string;
  store: SqliteEventStore;
  outboxes: Outboxes;
  connections: FakeConnections;
  media: MediaStore;
  drainer: OutboxDrainer;
  queue(deviceId: string, content: QueuedContent, to?: string): Promise<{ outboxId: string; waMessageId: string }>;
  events(deviceId: string): Promise<OutboxEvent[]>;
  statuses(deviceId: string): Promise<Array<{ waMessageId: string; status: string; error?: { code: string } }>>;
  close(): Promise<void>;
}

export async function outboxHarness(
  options: {
    settings?: Partial<OutboxSettings>;
    allowPrivateNetworks?: boolean;
    dir?: string;
    dnsLookup?: LookupFunction;
    fences?: DeviceFences;
    /** The outbox writes through this (a store that fails writes on demand). */
    writesThrough?: (store: SqliteEventStore) => EventStore;
    /** How long an engine call may take before the try counts as failed (default: the dispatcher's 5 minutes). */
    engineTimeoutMs?: number;
    /** The drainer's time and waits (default: the system clock). */
    clock?: Clock;
    /** The drainer's time alone (default: the clock's). */
    now?: () => number;
    /** The devices' pacing (default: none). */
    pacing?: OutboxDrainerDeps['pacing'];
  } = {},
): Promise<Harness> {
  const dir = options.dir ?? tempDir('dmg-outbox-');
  const store = new SqliteEventStore(join(dir, 'events.sqlite'));
  const outboxes = new Outboxes(options.writesThrough ? options.writesThrough(store) : store, silent);
  const connections = new FakeConnections();
  const media = new MediaStore(dir);
  await media.init();
  const guard = new OutboundGuard({ allowPrivateNetworks: options.allowPrivateNetworks ?? false });
  const dispatcher = new MessageDispatcher(
    media,
    new MediaFetcher(guard, MEDIA_TEST_SETTINGS.fetchTimeoutMs, options.dnsLookup),
    MEDIA_TEST_SETTINGS,
    options.engineTimeoutMs,
  );
  const drainer = new OutboxDrainer({
    outboxes,
    connections,
    dispatcher,
    media,
    settings: { ...OUTBOX_TEST_SETTINGS, ...options.settings },
    log: silent,
    ...(options.fences ? { fences: options.fences } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.pacing ? { pacing: options.pacing } : {}),
  });
  const events = async (deviceId: string) =>
    (await store.readStream(outboxStream(deviceId))) as unknown as OutboxEvent[];
  return {
    dir,
    store,
    outboxes,
    connections,
    media,
    drainer,
    async queue(deviceId, content, to = '4915112345678') {
      const message = {
        outboxId: randomUUID(),
        waMessageId: newWaMessageId(),
        to,
        content,
        createdAt: new Date().toISOString(),
      };
      await outboxes.execute(deviceId, { type: 'QueueMessage', deviceId, message });
      return { outboxId: message.outboxId, waMessageId: message.waMessageId };
    },
    events,
    async statuses(deviceId) {
      return (await events(deviceId)).flatMap((e) => (e.type === 'MessageStatusChanged' ? [e.data] : []));
    },
    async close() {
      await drainer.stop();
      guard.destroy();
      await store.close();
    },
  };
}

export const text = (body: string): QueuedContent => ({ kind: 'text', text: body });

/** Name resolution that answers these addresses for every name. */
export function fixedLookup(addresses: string[]): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    const entries = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if (options.all) callback(null, entries);
    else callback(null, entries[0].address, entries[0].family);
  }) as LookupFunction;
}

export interface RateLimiterWatch {
  /** Tries the outbox lanes handed to their rate limiter. */
  handed(): number;
  /** Of those, the ones it started; the others wait for the rate. */
  started(): number;
  restore(): void;
}

/**
 * Watches the outbox lanes' rate limiter: the lanes' p-queue (the only one given an abort signal, see
 * src/outbox/drain/outbox-drainer.ts). A queue that allows a try starts it inside add(), so once a try was handed
 * over, whether it started is known at once: a negative check without waiting for time to pass.
 */
export function watchRateLimiter(): RateLimiterWatch {
  let handed = 0;
  let started = 0;
  const add = PQueue.prototype.add;
  const spy = vi.spyOn(PQueue.prototype, 'add').mockImplementation(function (this: PQueue, task, options) {
    if (!options?.signal) return add.call(this, task, options);
    handed++;
    return add.call(this, (taskOptions: Parameters<typeof task>[0]) => (started++, task(taskOptions)), options);
  });
  return { handed: () => handed, started: () => started, restore: () => spy.mockRestore() };
}
