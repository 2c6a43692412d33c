/**
 * The outboxes of this process's devices, each loaded from its stream on first use and kept: the writers of the
 * `outbox-<deviceId>` streams (DeviceOutbox), through which every outbox command goes.
 */
import type { Logger } from 'pino';
import type { EventStore, StoredEvent } from '../../eventstore/event-store.js';
import { outboxStream } from '../../messages/message-events.js';
import { DeviceOutbox, type Executed } from './device-outbox.js';
import type { OutboxCommand, OutboxResultOf } from './outbox-decider.js';

/** Latest outbox events read back for countedPoint. */
const COUNTED_POINT_EVENTS = 200;
/** A read again that failed is tried again after this, doubled each time up to the max, this many times at most. */
const READ_AGAIN_FIRST_MS = 250;
const READ_AGAIN_MAX_MS = 5_000;
const READ_AGAIN_TRIES = 30;

export type OutboxChangeListener = (deviceId: string) => void;

export class Outboxes {
  private readonly loaded = new Map<string, Promise<DeviceOutbox>>();
  private readonly listeners = new Set<OutboxChangeListener>();
  /** Devices whose outbox is to be read again after a failed read (one timer each). */
  private readonly readingAgain = new Set<string>();

  constructor(
    private readonly store: EventStore,
    private readonly log: Logger,
    private readonly snapshotEvery?: number,
    /** Several processes append to the outbox streams: no pipelined appends (see DeviceOutboxOptions.pipeline). */
    private readonly otherWriters = false,
  ) {}

  get(deviceId: string): Promise<DeviceOutbox> {
    let outbox = this.loaded.get(deviceId);
    if (!outbox) {
      outbox = DeviceOutbox.load(this.store, deviceId, {
        snapshotEvery: this.snapshotEvery,
        pipeline: !this.otherWriters,
        onChange: (id) => this.changed(id),
        onSnapshotError: (error) => this.log.warn({ err: error, deviceId }, 'outbox snapshot not saved'),
      });
      this.loaded.set(deviceId, outbox);
      // A failed load (store down) is not cached: the next call tries again.
      outbox.catch(() => this.loaded.get(deviceId) === outbox && this.loaded.delete(deviceId));
    }
    return outbox;
  }

  /** Decides the command on the device's outbox and appends what it decided (DeviceOutbox.execute). */
  async execute<C extends OutboxCommand>(deviceId: string, command: C): Promise<Executed<OutboxResultOf<C>>> {
    return (await this.get(deviceId)).execute(command);
  }

  /**
   * Decides the command on at least what the stream holds now, whoever appended it: with several processes this
   * process's outbox may not have read another's appends yet, and reads the stream's tail first. Answers also
   * `latest`, the log position of the stream's latest event then (0: none): a record looked up in a read model
   * is as recent as the stream once the read models include it.
   */
  async executeOnLatest<C extends OutboxCommand>(
    deviceId: string,
    command: C,
  ): Promise<Executed<OutboxResultOf<C>> & { latest: number }> {
    const [last] = await this.store.readStream(outboxStream(deviceId), { direction: 'backwards', maxCount: 1 });
    const outbox = await this.get(deviceId);
    if (last) outbox.noteStored(last.revision);
    return { ...(await outbox.execute(command)), latest: last?.position ?? 0 };
  }

  /**
   * What the store holds of the device's outbox now: the log position of its latest event and the seq of its latest
   * queued message (0: none among the latest COUNTED_POINT_EVENTS, which counts more, never less). The unanswered
   * limit counts the message index up to that position and the decider adds what was queued after that seq: the
   * outbox's own state may hold a message whose append is not in the store yet, which the index cannot show.
   */
  async countedPoint(deviceId: string): Promise<{ position: number; seq: number }> {
    const events = await this.store.readStream(outboxStream(deviceId), {
      direction: 'backwards',
      maxCount: COUNTED_POINT_EVENTS,
    });
    const queued = events.find((event) => event.type === 'OutboxMessageQueued');
    return { position: events[0]?.position ?? 0, seq: (queued?.data as { seq?: number } | undefined)?.seq ?? 0 };
  }

  /** The log position of the device's latest outbox event (0: none), whoever appended it. */
  async lastPosition(deviceId: string): Promise<number> {
    const [last] = await this.store.readStream(outboxStream(deviceId), { direction: 'backwards', maxCount: 1 });
    return last?.position ?? 0;
  }

  /**
   * Another process appended this event to a device's outbox (seen in the log): a loaded outbox folds it when it
   * can, else (`owned`: this process runs the device) reads its stream again; the drainer is told either way.
   */
  noteEvent(deviceId: string, event: StoredEvent, owned: boolean): void {
    const loaded = this.loaded.get(deviceId);
    if (!loaded) return;
    void loaded.then(
      (outbox) => {
        const noted = outbox.noteEvent(event, owned);
        if (noted === 'folded') this.changed(deviceId);
        else if (noted === 'behind') this.tellOnceRead(deviceId, outbox, 0);
      },
      () => undefined,
    );
  }

  /**
   * This process runs the device (again): an outbox it loaded earlier missed what other processes appended
   * while it did not follow the device, so it reads its stream again, and the drainer is told.
   */
  refresh(deviceId: string): void {
    this.readAgain(deviceId, (outbox) => {
      outbox.invalidate();
      return true;
    });
  }

  private readAgain(deviceId: string, stale: (outbox: DeviceOutbox) => boolean): void {
    const loaded = this.loaded.get(deviceId);
    if (!loaded) return;
    void loaded.then(
      (outbox) => {
        if (stale(outbox)) this.tellOnceRead(deviceId, outbox, 0);
      },
      () => undefined,
    );
  }

  /**
   * Tells the drainer once the state is read again (a command waits for that), so that it sees what was added. A
   * read that fails (an election, the store down a moment) is tried again: else nothing reads it until the next
   * command, and the drainer, deciding on the state before, leaves what another process queued unsent.
   */
  private tellOnceRead(deviceId: string, outbox: DeviceOutbox, failures: number): void {
    outbox.caughtUp().then(
      () => this.changed(deviceId),
      (error: unknown) => {
        if (this.readingAgain.has(deviceId) || failures + 1 >= READ_AGAIN_TRIES) return;
        this.readingAgain.add(deviceId);
        this.log.warn({ err: error, deviceId }, 'outbox not read again; trying again');
        const pause = Math.min(READ_AGAIN_MAX_MS, READ_AGAIN_FIRST_MS * 2 ** failures);
        setTimeout(() => {
          this.readingAgain.delete(deviceId);
          this.tellOnceRead(deviceId, outbox, failures + 1);
        }, pause).unref();
      },
    );
  }

  /** Called after every append to a device's outbox (the drainer listens). */
  onChange(listener: OutboxChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(deviceId: string): void {
    for (const listener of this.listeners) {
      try {
        listener(deviceId);
      } catch (error) {
        this.log.error({ err: error, deviceId }, 'outbox change listener failed');
      }
    }
  }
}
