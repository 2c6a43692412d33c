/**
 * The live event stream (docs/architecture.md, "Live event stream"): one subscription to the store fans
 * out to every connected client, and a client that comes back with the last position it saw first reads
 * what it missed from the log, page by page, then joins the live fan-out with no gap and no duplicate.
 *
 * Slow clients cannot slow anyone: the fan-out never waits for a socket. A live client whose unsent
 * bytes (those its socket still holds and those the hub queued for it) pile up past `maxBufferBytes` is
 * disconnected with a TCP reset, so that the kernel frees what it held for it at once (a plain close would
 * keep its send buffer, megabytes, until the client read it or the connection timed out), and it resumes by
 * id; a client catching up reads the log only as fast as its socket drains.
 *
 * A client that authenticated with a device key is ended when the log rotates that key out, deletes it (a
 * scoped key) or deletes the device: the hub sees those events in log order, so no later event of the device
 * reaches it, in any process.
 */
import type { Logger } from 'pino';
import type {
  DeviceEventType,
  DeviceKeyDeletedData,
  DeviceKeyRotatedData,
  ScopedKeyEvent,
} from '../devices/device-events.js';
import {
  type EventStore,
  type StoredEvent,
  StoreUnavailableError,
  type Subscription,
} from '../eventstore/event-store.js';
import { forEachBatch } from '../eventstore/for-each-batch.js';
import { envelopeOf } from '../webhooks/envelope.js';

/** Where a client's bytes go: an http.ServerResponse in the gateway, any writable in tests. */
export interface StreamSink {
  write(chunk: string | Uint8Array): boolean;
  /** Writes between cork and uncork leave in one system call. */
  cork?(): void;
  uncork?(): void;
  readonly writableLength: number;
  readonly destroyed: boolean;
  destroy(): void;
  /** Closes once what was written has left (net.Socket); without it the sink is destroyed. */
  destroySoon?(): void;
  /** Closes with a TCP reset (net.Socket): the kernel drops what it still held to send. */
  resetAndDestroy?(): unknown;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

export interface StreamFilter {
  /** Only this device's events; undefined: every device (the admin stream). */
  deviceId?: string;
  /** Only these kinds (`message.received`, …); undefined: every kind. */
  kinds?: ReadonlySet<string>;
  /**
   * The hash of the device key the client authenticated with (a device-key client of `deviceId`): the stream
   * ends when that key is rotated out or the device deleted. Undefined: the admin key, which stays.
   */
  deviceKeyHash?: string;
  /** `deviceKeyHash` is the key made with the device (which a rotation replaces), not a scoped key (which is deleted). */
  primaryKey?: boolean;
  /**
   * How events are written: `sse` (the default), server-sent events; `json-lines`, one line of JSON per event
   * (`{ id, event, deviceId, timestamp, data, eventId }`) for a sink that sends each line as a message (WebSocket).
   */
  format?: 'sse' | 'json-lines';
}

export interface StreamHubOptions {
  /** A comment line this often keeps proxies from closing an idle stream. */
  heartbeatMs: number;
  /** A live client with more unsent bytes than this is disconnected (it resumes by id). */
  maxBufferBytes: number;
  /** Writes to clients leave at most this often (ms); 0: as soon as each batch is committed. */
  flushMs?: number;
  /** Events read from the log per page while a client catches up. */
  pageSize?: number;
  log: Logger;
}

export interface StreamHubStats {
  /** Clients receiving live events. */
  live: number;
  /** Clients reading what they missed from the log. */
  catchingUp: number;
  /** Clients disconnected for being too far behind, since the start. */
  disconnectedSlow: number;
  /** The position of the last event handed to live clients. */
  position: number;
}

const HEARTBEAT = ': keep-alive\n\n';
/** Flushes are apart by at least this many times the last one's duration: the fan-out takes at most half of the process. */
const FLUSH_DUTY_FACTOR = 2;

class Client {
  /** Events up to this position are not for this client: it has them, or they were filtered out (live clients skip only those). */
  last: number;
  live = false;
  closed = false;

  constructor(
    readonly sink: StreamSink,
    readonly filter: StreamFilter,
    after: number,
    /**
     * The hub's position when the client opened: its key held then (the hub checked the rotations it had
     * passed), so only key changes after it retire the key; older ones, met while catching up, came before it.
     */
    private readonly keyHeldAt: number,
  ) {
    this.last = after;
  }

  wants(deviceId: string, kind: string): boolean {
    return (
      (this.filter.deviceId === undefined || this.filter.deviceId === deviceId) &&
      (this.filter.kinds === undefined || this.filter.kinds.has(kind))
    );
  }

  /**
   * Whether the key change at `position` ends this client: its device deleted, its key (the one made with the
   * device) rotated to another, or its scoped key deleted.
   */
  retiredBy(change: KeyChange, position: number): boolean {
    const { deviceKeyHash, deviceId, primaryKey = true } = this.filter;
    if (deviceKeyHash === undefined || change.deviceId !== deviceId || position <= this.keyHeldAt) return false;
    switch (change.kind) {
      case 'device-deleted':
        return true;
      case 'rotated':
        return primaryKey && change.keyHash !== deviceKeyHash;
      case 'revoked':
        return !primaryKey && change.keyHash === deviceKeyHash;
    }
  }
}

/**
 * A device's keys changed: `rotated`, the key made with it is now `keyHash`; `revoked`, the scoped key
 * `keyHash` was deleted; `device-deleted`, every key of the device stops.
 */
type KeyChange =
  { kind: 'rotated' | 'revoked'; deviceId: string; keyHash: string } | { kind: 'device-deleted'; deviceId: string };

const KEY_ROTATED = 'DeviceKeyRotated' satisfies DeviceEventType;
const DEVICE_DELETED = 'DeviceDeleted' satisfies DeviceEventType;
const KEY_DELETED = 'DeviceKeyDeleted' satisfies ScopedKeyEvent['type'];

function keyChangeOf(stored: StoredEvent): KeyChange | undefined {
  if (stored.type === KEY_ROTATED) {
    const data = stored.data as DeviceKeyRotatedData;
    return { kind: 'rotated', deviceId: data.deviceId, keyHash: data.keyHash };
  }
  if (stored.type === KEY_DELETED) {
    const data = stored.data as DeviceKeyDeletedData;
    return { kind: 'revoked', deviceId: data.deviceId, keyHash: data.keyHash };
  }
  if (stored.type === DEVICE_DELETED)
    return { kind: 'device-deleted', deviceId: (stored.data as { deviceId: string }).deviceId };
  return undefined;
}

/** One SSE frame: `id:` the log position, `event:` the kind, `data:` the webhook envelope (one line of JSON). */
export function frameOf(
  stored: StoredEvent,
): { deviceId: string; kind: string; frame: string; json: () => string } | undefined {
  const envelope = envelopeOf(stored);
  if (!envelope) return undefined;
  const data = JSON.stringify(envelope);
  return {
    deviceId: envelope.deviceId,
    kind: envelope.event,
    frame: `id: ${stored.position}\nevent: ${envelope.event}\ndata: ${data}\n\n`,
    // The same envelope with `id` the log position (what `?after=` takes) and `eventId` the envelope's id.
    json: () => `${JSON.stringify({ ...envelope, id: stored.position, eventId: envelope.id })}\n`,
  };
}

/** What a client gets of an event, in its format. */
const encoded = (client: Client, framed: NonNullable<ReturnType<typeof frameOf>>) =>
  client.filter.format === 'json-lines' ? framed.json() : framed.frame;

export class EventStreamHub {
  private readonly admins = new Set<Client>();
  private readonly byDevice = new Map<string, Set<Client>>();
  private readonly catchingUp = new Set<Client>();
  private subscription: Subscription | undefined;
  private running: Promise<void> | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private stopped = false;
  private slowDisconnects = 0;
  private readonly pageSize: number;
  private readonly flushMs: number;
  /** Frames queued for each live client since the last flush, in log order. */
  private pending = new Map<Client, Buffer[]>();
  private flushTimer: NodeJS.Immediate | NodeJS.Timeout | undefined;
  private lastFlush = -Infinity;
  /** How long the last flush took (ms). */
  private lastFlushCost = 0;
  /** The position of the last event handed to live clients: a client that has seen it is caught up. */
  position = 0;
  /**
   * The key each device changed to (null: deleted) in the events this hub has passed, and the scoped keys
   * deleted: a device-key client opening after the change, authenticated by a read model that had not seen it
   * yet, is ended at once.
   */
  private readonly keyChanges = new Map<string, string | null>();
  private readonly revokedKeys = new Set<string>();

  constructor(
    private readonly store: EventStore,
    private readonly options: StreamHubOptions,
  ) {
    this.pageSize = options.pageSize ?? 1_000;
    this.flushMs = options.flushMs ?? 0;
  }

  /** Subscribes right after `after` (the log's head as far as the caller knows: nobody is connected yet). */
  start(after: number): void {
    this.position = after;
    const subscription = (this.subscription = this.store.subscribe({ after }));
    this.running = (async () => {
      try {
        await forEachBatch(subscription, (batch) => this.dispatch(batch));
      } catch (error) {
        if (!this.stopped)
          this.options.log.error({ err: error }, 'event stream subscription ended; closing stream clients');
      } finally {
        this.closeAll();
      }
    })();
    this.heartbeat = setInterval(() => this.beat(), this.options.heartbeatMs);
    this.heartbeat.unref();
  }

  /**
   * Streams to `sink`: from right after `after` when given (what the client missed, read from the log,
   * then live), else from the next new event. The sink is closed when the client is too far behind or the
   * hub stops; a sink closed by the client leaves the hub.
   */
  open(sink: StreamSink, filter: StreamFilter, after?: number): void {
    if (this.stopped) {
      sink.destroy();
      return;
    }
    if (filter.deviceKeyHash !== undefined && filter.deviceId !== undefined) {
      const current = this.keyChanges.get(filter.deviceId);
      const primary = filter.primaryKey ?? true;
      const stale = primary
        ? current !== undefined && current !== filter.deviceKeyHash
        : current === null || this.revokedKeys.has(filter.deviceKeyHash);
      if (stale) {
        sink.destroy();
        return;
      }
    }
    const client = new Client(sink, filter, after ?? this.position, this.position);
    sink.once('close', () => this.detach(client));
    if (client.last >= this.position) this.attach(client);
    else {
      this.catchingUp.add(client);
      void this.catchUp(client).catch((error: unknown) => {
        if (!client.closed) this.options.log.warn({ err: error }, 'event stream catch-up failed; closing the client');
        this.kick(client);
      });
    }
  }

  /**
   * Whether `after` can be resumed from: 0 (the start), or the position of an event of this log. A client can
   * only have got any other from another log (a data directory restored from a backup, or replaced, or another
   * store): past the end, it would be sent nothing until this log grew that far; inside an EventStoreDB record,
   * the server refuses to read from there at all.
   */
  async isEventPosition(after: number): Promise<boolean> {
    if (after === 0) return true;
    try {
      const [at] = await this.store.readAll({ from: after, maxCount: 1 });
      return at?.position === after;
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw error;
      return false;
    }
  }

  stats(): StreamHubStats {
    let live = this.admins.size;
    for (const clients of this.byDevice.values()) live += clients.size;
    return { live, catchingUp: this.catchingUp.size, disconnectedSlow: this.slowDisconnects, position: this.position };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.subscription?.close();
    await this.running;
    this.closeAll();
  }

  /** Reads the log after the client's position until it has seen what live clients have, then joins them. */
  private async catchUp(client: Client): Promise<void> {
    while (!client.closed) {
      // Checked and joined in one synchronous step: nothing can be dispatched in between.
      if (client.last >= this.position) {
        this.catchingUp.delete(client);
        this.attach(client);
        return;
      }
      const page = await this.store.readAll({ after: client.last, maxCount: this.pageSize });
      if (client.closed) return;
      if (page.length === 0) {
        // Nothing after it in the log: the hub's position is not past any event this client lacks.
        client.last = this.position;
        continue;
      }
      let chunk = '';
      for (const stored of page) {
        const change = keyChangeOf(stored);
        if (change && client.retiredBy(change, stored.position)) {
          // What came before the change still leaves; nothing after it.
          if (chunk !== '') client.sink.write(chunk);
          this.retire(client);
          return;
        }
        const framed = frameOf(stored);
        if (framed && client.wants(framed.deviceId, framed.kind)) chunk += encoded(client, framed);
      }
      client.last = page[page.length - 1].position;
      if (chunk !== '' && !client.sink.write(chunk)) await drained(client.sink);
    }
  }

  private attach(client: Client): void {
    client.live = true;
    const { deviceId } = client.filter;
    if (deviceId === undefined) {
      this.admins.add(client);
      return;
    }
    let clients = this.byDevice.get(deviceId);
    if (!clients) this.byDevice.set(deviceId, (clients = new Set()));
    clients.add(client);
  }

  private detach(client: Client): void {
    client.closed = true;
    this.catchingUp.delete(client);
    if (!client.live) return;
    client.live = false;
    const { deviceId } = client.filter;
    if (deviceId === undefined) {
      this.admins.delete(client);
      return;
    }
    const clients = this.byDevice.get(deviceId);
    clients?.delete(client);
    if (clients?.size === 0) this.byDevice.delete(deviceId);
  }

  /**
   * Queues a batch for the live clients: each event is encoded once and shared by every client that wants
   * it; the queued frames leave at the next flush (see `flushSoon`).
   */
  private dispatch(batch: readonly StoredEvent[]): void {
    if (batch.length === 0) return;
    if (this.admins.size === 0 && this.byDevice.size === 0) {
      // Nobody listens: nothing is encoded (the hub rides every append of a busy gateway); key changes are still noted.
      for (const stored of batch) {
        const change = keyChangeOf(stored);
        if (change) this.noteKeyChange(change);
      }
      this.position = batch[batch.length - 1].position;
      return;
    }
    for (const stored of batch) {
      const change = keyChangeOf(stored);
      // Before the next event is queued: a retired client gets nothing that comes after the change.
      if (change) this.changeKey(change, stored.position);
      const framed = frameOf(stored);
      if (!framed) continue;
      // Each format is encoded once, for every client that takes it.
      let sse: Buffer | undefined;
      let json: Buffer | undefined;
      for (const clients of [this.admins, this.byDevice.get(framed.deviceId)]) {
        if (!clients) continue;
        for (const client of clients) {
          if (stored.position <= client.last || !client.wants(framed.deviceId, framed.kind)) continue;
          const bytes =
            client.filter.format === 'json-lines'
              ? (json ??= Buffer.from(framed.json()))
              : (sse ??= Buffer.from(framed.frame));
          const frames = this.pending.get(client);
          if (frames) frames.push(bytes);
          else this.pending.set(client, [bytes]);
        }
      }
    }
    this.position = batch[batch.length - 1].position;
    if (this.pending.size > 0) this.flushSoon();
  }

  /**
   * Each write to a socket is a system call, the fan-out's whole cost (a thousand clients at a hundred
   * events a second would be 100,000 of them a second, more than a core). So writes to live clients leave
   * in flushes, and the time between two flushes is at least `flushMs` and at least FLUSH_DUTY_FACTOR
   * times what the last flush took: an event after a quiet spell leaves at once (after the current tick),
   * events that come faster share one write per client, and the fan-out keeps to a share of the process
   * that leaves room for everything else, however many clients listen.
   */
  private flushSoon(): void {
    if (this.flushTimer !== undefined) return;
    const gap = Math.max(this.flushMs, this.lastFlushCost * FLUSH_DUTY_FACTOR);
    const wait = Math.max(0, this.lastFlush + gap - performance.now());
    const flush = () => {
      this.flushTimer = undefined;
      this.flush();
    };
    this.flushTimer = wait === 0 ? setImmediate(flush) : setTimeout(flush, wait);
  }

  private flush(): void {
    // Wall time, not CPU time: on a machine short of cores a flush takes longer and the next one waits
    // longer, so the fan-out asks less of the machine exactly when it has less to give.
    const started = performance.now();
    const pending = this.pending;
    this.pending = new Map();
    for (const [client, frames] of pending) this.send(client, frames);
    this.lastFlush = started;
    this.lastFlushCost = performance.now() - started;
  }

  /** The frames are shared by every client that gets them; several leave corked, in one system call. */
  private send(client: Client, frames: readonly (string | Buffer)[]): void {
    if (client.closed) return;
    // Bytes still unsent from earlier writes, with these: this client reads slower than events come. One that
    // took all it was sent is not cut for a burst, however large.
    const unsent = client.sink.writableLength;
    if (unsent > 0 && unsent + byteLengthOf(frames) > this.options.maxBufferBytes) {
      this.slowDisconnects += 1;
      this.kick(client, 'reset');
      return;
    }
    if (frames.length === 1) {
      client.sink.write(frames[0]);
      return;
    }
    client.sink.cork?.();
    for (const frame of frames) client.sink.write(frame);
    client.sink.uncork?.();
  }

  private noteKeyChange(change: KeyChange): void {
    if (change.kind === 'revoked') this.revokedKeys.add(change.keyHash);
    else this.keyChanges.set(change.deviceId, change.kind === 'rotated' ? change.keyHash : null);
  }

  private changeKey(change: KeyChange, position: number): void {
    this.noteKeyChange(change);
    const clients = this.byDevice.get(change.deviceId);
    if (!clients) return;
    for (const client of [...clients]) if (client.retiredBy(change, position)) this.retire(client);
  }

  /** Ends a client whose key no longer holds: the frames queued before the change leave first, then the connection closes. */
  private retire(client: Client): void {
    const frames = this.pending.get(client);
    this.pending.delete(client);
    if (frames) this.send(client, frames);
    if (client.closed) return;
    this.detach(client);
    if (client.sink.destroyed) return;
    if (client.sink.destroySoon) client.sink.destroySoon();
    else client.sink.destroy();
  }

  private beat(): void {
    for (const client of this.admins) this.send(client, [HEARTBEAT]);
    for (const clients of this.byDevice.values()) for (const client of clients) this.send(client, [HEARTBEAT]);
  }

  /** Closes the client's connection; `reset` drops what is still unsent (a client too far behind resumes by id). */
  private kick(client: Client, how: 'close' | 'reset' = 'close'): void {
    this.detach(client);
    if (client.sink.destroyed) return;
    if (how === 'reset' && client.sink.resetAndDestroy) client.sink.resetAndDestroy();
    else client.sink.destroy();
  }

  /** What was queued still leaves (less for the clients to resume), then every client is closed. */
  private closeAll(): void {
    if (this.flushTimer !== undefined) {
      clearTimeout(this.flushTimer as NodeJS.Timeout);
      clearImmediate(this.flushTimer as NodeJS.Immediate);
      this.flushTimer = undefined;
    }
    this.flush();
    for (const client of [...this.admins, ...[...this.byDevice.values()].flatMap((c) => [...c]), ...this.catchingUp])
      this.kick(client);
  }
}

const byteLengthOf = (frames: readonly (string | Buffer)[]) =>
  frames.reduce((sum, frame) => sum + (typeof frame === 'string' ? Buffer.byteLength(frame) : frame.length), 0);

/** Resolves when the sink can take more, or is closed. */
function drained(sink: StreamSink): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      sink.off('drain', done);
      sink.off('close', done);
      resolve();
    };
    sink.once('drain', done);
    sink.once('close', done);
  });
}
