/**
 * This process's membership and its device leases (docs/architecture.md, "Several processes"). Every
 * `tickMs` it heartbeats, then acquires free devices and those of silent members up to its share, and hands
 * back (stopped first) what is beyond it. What it knows of the others comes from the log it follows. A
 * member that cannot heartbeat for `timeoutMs - marginMs` gives its devices up by itself before anyone may
 * take them; any write it still attempts carries a fence that is refused. The log it follows is not the only
 * witness (a subscription may stall while appends work): a member that looks silent is taken from only after
 * its own stream, read directly, shows no heartbeat since; and while this member's own heartbeats do not come
 * back through its subscription (behind, or down), it takes no device at all.
 */
import type { Logger } from 'pino';
import { CommandHandler } from '../commands/command-handler.js';
import { type EventStore, type Fence, FenceRejectedError, type StoredEvent } from '../eventstore/event-store.js';
import { followAll } from '../eventstore/follow-all.js';
import { eventGuard } from '../eventstore/typed-events.js';
import { leaseDecider } from './lease-decider.js';
import { LEASE_EVENT_TYPES, LEASE_STREAM_PREFIX, type LeaseEvent, leaseStream } from './lease-events.js';
import type { FenceSource } from './fenced-store.js';
import { MemberLiveness } from './member-liveness.js';
import { type Clock, type ClockTimer, systemClock } from '../time/clock.js';

export interface DeviceLeasesOptions {
  store: EventStore;
  memberId: string;
  timeoutMs: number;
  log: Logger;
  /** Devices that exist (the devices read model); the ones to spread over the members. */
  devices: () => readonly string[];
  /** The device is ours: start its actor (which resumes a running session). */
  onAcquired: (deviceId: string) => Promise<void>;
  /** The device is no longer ours (or is about to be released): stop its actor, its socket, its lanes. */
  onLost: (deviceId: string, reason: string) => Promise<void>;
  /** A device this process runs was deleted: close and unlink its session, wipe its credentials (before its release). */
  onDeleted?: (deviceId: string) => Promise<void>;
  /**
   * Whether the log records the device's deletion. Asked of a device missing from `devices` whose lease no live
   * member holds (the list may not show a new device yet): a deleted one is taken and closed here.
   */
  isDeleted?: (deviceId: string) => Promise<boolean>;
  /** Also told of every event of the log this process follows (other processes' commands reach the owner this way). */
  observe?: (events: readonly StoredEvent[]) => void;
  /** Log position to follow from (the read models' position; lease streams are read at start). */
  after: () => number;
  heartbeatMs?: number;
  tickMs?: number;
  marginMs?: number;
  /** Devices acquired or released in one tick at most (spreads a takeover over a few ticks). */
  perTick?: number;
  /** Milliseconds on a clock that only moves forward (default: the monotonic clock, as epoch ms at start-up). */
  now?: () => number;
  /** The ticks' timers; also the time, unless `now` is given (default: the system timers and the monotonic clock). */
  clock?: Clock;
}

interface KnownLease {
  owner: string | undefined;
  revision: number;
  /** Released because the device was deleted: its session was closed then, nothing is left to do. */
  closedAsDeleted: boolean;
}

const isLeaseEvent = eventGuard<LeaseEvent>(LEASE_EVENT_TYPES);
/** How soon the early tick after a device's creation comes (`tickSoon`): the created devices seen meanwhile join it. */
const SOON_MS = 20;

export class DeviceLeases implements FenceSource {
  readonly memberId: string;
  private readonly leases = new Map<string, KnownLease>();
  /** Devices this process runs, with the lease revision it holds them at. */
  private readonly held = new Map<string, number>();
  /**
   * Devices being handed back, with that revision: no longer run here (owns() is false, so requests go to
   * whoever takes them through the log, and no new actor starts here), while the last writes of their stopping
   * actor still carry the fence.
   */
  private readonly releasing = new Map<string, number>();
  /** Which members are alive: the heartbeats, this member's and those seen in the log. */
  private readonly liveness: MemberLiveness;
  private readonly leaseCommands: CommandHandler<
    { owner: string | undefined },
    Parameters<typeof leaseDecider.decide>[0],
    LeaseEvent
  >;
  private readonly now: () => number;
  private readonly heartbeatMs: number;
  private readonly marginMs: number;
  private readonly clock: Clock;
  private timer: ClockTimer | undefined;
  /** A device was created while a tick ran (or before the first): the next tick comes soon (`tickSoon`). */
  private soon = false;
  private watchdog: ClockTimer | undefined;
  private heartbeater: ClockTimer | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private follower: { stop(): Promise<void> } | undefined;
  private stopped = false;
  /** Devices stopped because this member could not heartbeat: resumed once it can, if the log still gives them to it. */
  private readonly silenced = new Set<string>();
  /** Devices being handed over (stopping before their release): not acquired again meanwhile. */
  private readonly busy = new Set<string>();
  /** The subscription was behind when last looked at (logged once per stretch). */
  private wasBehind = false;

  constructor(private readonly options: DeviceLeasesOptions) {
    this.memberId = options.memberId;
    this.clock = options.clock ?? systemClock;
    this.now = options.now ?? (options.clock ? () => options.clock!.now() : monotonicNow);
    this.heartbeatMs = options.heartbeatMs ?? Math.max(100, Math.floor(options.timeoutMs / 4));
    this.marginMs = options.marginMs ?? Math.floor(options.timeoutMs / 5);
    this.leaseCommands = new CommandHandler({ store: options.store, decider: leaseDecider, cacheSize: 0 });
    this.liveness = new MemberLiveness({
      store: options.store,
      memberId: options.memberId,
      timeoutMs: options.timeoutMs,
      heartbeatMs: this.heartbeatMs,
      log: options.log,
      now: this.now,
    });
  }

  async start(): Promise<void> {
    await this.liveness.join();
    const from = this.options.after();
    // Where every device's lease is now; later changes come through the log from `from` on (applied by revision).
    for (const deviceId of this.options.devices()) await this.refresh(deviceId);
    this.follower = followAll(this.options.store, {
      after: from,
      onBatch: (events) => this.observe(events),
      log: this.options.log,
      name: 'device leases',
    });
    await this.tick();
    this.schedule();
  }

  /** The fence of a device this process runs (undefined: it does not). */
  fence(deviceId: string): Fence | undefined {
    const revision = this.held.get(deviceId) ?? this.releasing.get(deviceId);
    return revision === undefined ? undefined : { streamId: leaseStream(deviceId), revision };
  }

  owns(deviceId: string): boolean {
    return this.held.has(deviceId);
  }

  /** Devices this process runs. */
  owned(): string[] {
    return [...this.held.keys()];
  }

  /** Devices per live member (this one included), as this process knows them. */
  distribution(): Array<{ memberId: string; devices: number; self: boolean }> {
    const counts = new Map<string, number>();
    for (const member of this.liveness.liveMembers()) counts.set(member, 0);
    for (const lease of this.leases.values())
      if (lease.owner !== undefined && counts.has(lease.owner)) counts.set(lease.owner, counts.get(lease.owner)! + 1);
    return [...counts].map(([memberId, devices]) => ({ memberId, devices, self: memberId === this.memberId }));
  }

  /**
   * How far behind the subscription this member follows the log by is, judged by its own last heartbeat not seen
   * back: `behind` past half a lease timeout (down, stalled, or slow), and then no device is taken.
   */
  following(): { state: 'live' | 'behind'; behindMs: number } {
    return this.liveness.following();
  }

  fenceRejected(deviceId: string, error: FenceRejectedError): void {
    if (!this.held.has(deviceId)) return;
    this.options.log.warn(
      { deviceId, err: error },
      'a write for the device was refused: another process holds its lease; stopping it here',
    );
    this.drop(deviceId, 'fence_rejected');
  }

  /** Graceful stop: every device is stopped and released (the others take them at once), then the member leaves. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clock.clear(this.timer);
    this.clock.clear(this.watchdog);
    this.clock.clear(this.heartbeater);
    await this.ticking;
    await this.liveness.settled();
    const at = new Date(this.now()).toISOString();
    await Promise.all(
      [...this.held.keys()].map(async (deviceId) => {
        await this.handBack(deviceId, 'stopping');
        await this.leaseCommands
          .handle(leaseStream(deviceId), {
            type: 'ReleaseLease',
            deviceId,
            member: this.memberId,
            reason: 'stopping',
            at,
          })
          .catch(() => undefined);
      }),
    );
    await this.liveness.leave(at);
    await this.follower?.stop();
  }

  /**
   * A device was created (seen in the log): the next tick comes at once rather than up to `tickMs` later, so that a
   * new device has an owner (and its first session command an answer) without waiting for the timer (issue 30:
   * setting up 100 devices through two processes waited for a tick per device). Coalesced: one early tick for the
   * devices created meanwhile.
   */
  tickSoon(): void {
    if (this.stopped) return;
    this.soon = true;
    // A tick running now may have read the device list before the device was in it: the one after it comes soon.
    if (this.timer === undefined) return;
    this.clock.clear(this.timer);
    this.timer = undefined;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    const delayMs = this.soon ? SOON_MS : (this.options.tickMs ?? Math.min(1_000, this.heartbeatMs));
    this.soon = false;
    // Checked on a timer of its own as well: a tick can wait on a stalled heartbeat, or on devices starting
    // and stopping, for longer than the margin before others may take our devices.
    this.watchdog ??= this.clock.setInterval(
      () => this.stopIfSilent(),
      this.options.tickMs ?? Math.min(1_000, this.heartbeatMs),
    );
    this.watchdog.unref();
    // Heartbeats on a timer of their own too: a tick that waits on devices starting during an election (each
    // store call retried up to its deadline) must not starve them, or this member falls silent and stops every
    // device it runs, to take them again a tick later (leader killed every 5 s: issue 31).
    this.heartbeater ??= this.clock.setInterval(() => {
      if (!this.stopped) void this.liveness.heartbeat();
    }, this.heartbeatMs);
    this.heartbeater.unref();
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.ticking = this.tick()
        .catch((error: unknown) => this.options.log.warn({ err: error }, 'lease tick failed'))
        .finally(() => this.schedule());
    }, delayMs);
    this.timer.unref();
  }

  /** Silent for nearly a timeout: the others may take our devices any moment. */
  private silent(): boolean {
    return this.now() - this.liveness.lastHeartbeat > this.options.timeoutMs - this.marginMs;
  }

  /**
   * Silent (paused, or the store refused or stalled the heartbeats): the others may have taken our devices
   * already, or will soon. They stop here before anything else; the log says later whether they are still ours.
   */
  private stopIfSilent(): void {
    if (!this.silent()) return;
    for (const deviceId of [...this.held.keys()]) {
      this.drop(deviceId, 'heartbeat_lost');
      this.silenced.add(deviceId);
    }
  }

  private async tick(): Promise<void> {
    const silencedBefore = [...this.silenced];
    this.stopIfSilent();
    await this.liveness.heartbeat();
    if (this.stopped || this.silent()) return;
    // Devices stopped in an earlier tick for want of heartbeats may still name this member in the log, and nobody
    // takes a live member's lease: run them again if the log (read now, its follower caught up since) still says so.
    for (const deviceId of silencedBefore) {
      if (this.stopped) break;
      if (this.busy.has(deviceId)) continue; // still stopping: the next tick
      this.silenced.delete(deviceId);
      if (!this.held.has(deviceId)) await this.resume(deviceId);
    }
    this.liveness.prune(new Set([...this.leases.values()].map((lease) => lease.owner)));
    const live = this.liveness.liveMembers();
    const behind = this.following().state === 'behind';
    if (behind !== this.wasBehind) {
      this.wasBehind = behind;
      if (behind)
        this.options.log.warn(
          { memberId: this.memberId, behindMs: this.following().behindMs },
          'the subscription to the log is behind (the heartbeats of this member do not come back through it): taking no devices until it is live',
        );
      else this.options.log.info({ memberId: this.memberId }, 'the subscription to the log is live again');
    }
    const devices = this.options.devices();
    // Members that look silent but hold leases: their own streams, read directly, may say they are alive.
    if (!behind)
      await this.liveness.confirmSilent(
        live,
        [...this.leases.values()].map((lease) => lease.owner),
        () => this.stopped,
      );
    const share = Math.ceil(devices.length / Math.max(1, live.size));
    const perTick = this.options.perTick ?? 64;
    let changes = 0;
    // Take free devices and those of members that stopped heartbeating, up to our share.
    for (const deviceId of shuffled(devices)) {
      if (behind || this.held.size >= share || changes >= perTick || this.stopped) break;
      if (this.held.has(deviceId) || this.busy.has(deviceId)) continue;
      const lease = this.leases.get(deviceId);
      if (lease?.owner !== undefined && live.has(lease.owner)) continue;
      changes += 1;
      await this.acquire(deviceId, live);
    }
    // Deleted devices are closed and handed back. Here, not only when the log follower sees DeviceDeleted: the
    // device list may show the deletion first, and once released nobody would unlink the account.
    const existing = new Set(devices);
    for (const [deviceId, revision] of [...this.held])
      if (!existing.has(deviceId)) await this.closeDeleted(deviceId, revision);
    // The log names this member but it does not run the device: an acquire whose answer was lost, or a release
    // that failed. Nobody takes a live member's lease, so run it (within the share) or hand it back.
    for (const [deviceId, lease] of [...this.leases]) {
      if (
        lease.owner !== this.memberId ||
        this.held.has(deviceId) ||
        this.busy.has(deviceId) ||
        this.silenced.has(deviceId) ||
        this.stopped
      )
        continue;
      if (!existing.has(deviceId)) await this.closeDeleted(deviceId, lease.revision);
      else if (this.held.size < share) await this.resume(deviceId);
      else await this.release(deviceId, 'rebalance');
    }
    // Deleted devices nobody closed: their owner died before it saw the deletion, or nobody held them then (a
    // rebalance, a stop). The account would stay linked: a live member takes the lease, closes, then releases.
    for (const [deviceId, lease] of [...this.leases]) {
      if (behind || changes >= perTick || this.stopped) break;
      if (existing.has(deviceId) || lease.closedAsDeleted || this.held.has(deviceId) || this.busy.has(deviceId))
        continue;
      if (lease.owner === this.memberId || (lease.owner !== undefined && live.has(lease.owner))) continue;
      if (!(await this.isDeleted(deviceId))) continue;
      changes += 1;
      await this.takeDeleted(deviceId, live);
    }
    // While another live member is below the fair count (devices / live members, rounded down): hand back
    // what is beyond our share, or one device at our share (4 devices over 3 members settle at 2/1/1, not 2/2/0).
    const fair = Math.floor(devices.length / Math.max(1, live.size));
    const below = [...this.countsOf(live)].some(([member, count]) => member !== this.memberId && count < fair);
    const excess = this.held.size > share ? this.held.size - share : this.held.size > fair ? 1 : 0;
    if (below && excess > 0) {
      for (const deviceId of [...this.held.keys()].slice(0, Math.min(perTick, excess)))
        await this.release(deviceId, 'rebalance');
    }
  }

  private async isDeleted(deviceId: string): Promise<boolean> {
    try {
      return (await this.options.isDeleted?.(deviceId)) === true;
    } catch (error) {
      this.options.log.warn({ deviceId, err: error }, 'could not tell whether a device was deleted');
      return false;
    }
  }

  /** Takes the lease of a deleted device nobody holds (or whose holder is dead) to close its session. */
  private async takeDeleted(deviceId: string, live: ReadonlySet<string>): Promise<void> {
    const revision = await this.acquireLease(deviceId, live, 'could not take the lease of a deleted device');
    if (revision === undefined) return;
    this.options.log.info({ deviceId, memberId: this.memberId }, 'closing a deleted device nobody closed');
    await this.closeDeleted(deviceId, revision);
  }

  /** Closes and unlinks a deleted device's session under its lease (held at `revision`), then releases it. */
  private async closeDeleted(deviceId: string, revision: number): Promise<void> {
    // Held while it closes: its writes carry the fence, and the session's owner is this process.
    this.held.set(deviceId, revision);
    await this.options
      .onDeleted?.(deviceId)
      .catch((error: unknown) => this.options.log.warn({ deviceId, err: error }, 'could not close a deleted device'));
    await this.release(deviceId, 'deleted');
  }

  private countsOf(live: ReadonlySet<string>): Map<string, number> {
    const counts = new Map<string, number>([...live].map((member) => [member, 0]));
    for (const lease of this.leases.values())
      if (lease.owner !== undefined && counts.has(lease.owner)) counts.set(lease.owner, counts.get(lease.owner)! + 1);
    return counts;
  }

  private async acquire(deviceId: string, live: ReadonlySet<string>): Promise<void> {
    const revision = await this.acquireLease(deviceId, live, 'could not acquire a device lease');
    if (revision === undefined) return;
    this.held.set(deviceId, revision);
    this.options.log.info({ deviceId, memberId: this.memberId }, 'device acquired');
    await this.startDevice(deviceId, 'could not start an acquired device');
  }

  /** The revision this member now holds the device's lease at; undefined when another live member holds it, or the store failed. */
  private async acquireLease(
    deviceId: string,
    live: ReadonlySet<string>,
    failure: string,
  ): Promise<number | undefined> {
    try {
      const handled = await this.leaseCommands.handle(leaseStream(deviceId), {
        type: 'AcquireLease',
        deviceId,
        member: this.memberId,
        liveMembers: live,
        at: new Date(this.now()).toISOString(),
      });
      this.learn(deviceId, handled.state.owner, handled.revision);
      return handled.state.owner === this.memberId && !this.stopped ? handled.revision : undefined;
    } catch (error) {
      this.options.log.warn({ deviceId, err: error }, failure);
      return undefined;
    }
  }

  /** Starts a device just held; one that cannot start is handed back, to be taken again (here or elsewhere) later. */
  private async startDevice(deviceId: string, failure: string): Promise<void> {
    try {
      await this.options.onAcquired(deviceId);
    } catch (error) {
      this.options.log.error({ deviceId, err: error }, failure);
      // Held but not running, it would stay so: nobody takes a live member's lease.
      if (this.held.has(deviceId)) await this.release(deviceId, 'start_failed');
    }
  }

  /** Holds again, under the same revision, a lease the log still gives this member (read now, not as last seen). */
  private async resume(deviceId: string): Promise<void> {
    try {
      const last = (await this.options.store.readStream(leaseStream(deviceId))).at(-1);
      if (!last || !isLeaseEvent(last)) return;
      const owner = last.type === 'LeaseAcquired' ? last.data.owner : undefined;
      this.learn(deviceId, owner, last.revision, closedAsDeleted(last));
      if (owner !== this.memberId || this.held.has(deviceId) || this.busy.has(deviceId) || this.stopped) return;
      this.held.set(deviceId, last.revision);
      this.options.log.info(
        { deviceId, memberId: this.memberId },
        'device resumed: the log names this process as its holder',
      );
    } catch (error) {
      this.options.log.warn({ deviceId, err: error }, 'could not read a device lease');
      return;
    }
    await this.startDevice(deviceId, 'could not start a resumed device');
  }

  private async release(deviceId: string, reason: string): Promise<void> {
    this.busy.add(deviceId);
    try {
      await this.handBack(deviceId, reason);
      const handled = await this.leaseCommands.handle(leaseStream(deviceId), {
        type: 'ReleaseLease',
        deviceId,
        member: this.memberId,
        reason,
        at: new Date(this.now()).toISOString(),
      });
      this.learn(deviceId, handled.state.owner, handled.revision, reason === 'deleted' && handled.events.length > 0);
    } catch (error) {
      this.options.log.warn({ deviceId, err: error }, 'could not release a device lease');
    } finally {
      this.busy.delete(deviceId);
    }
  }

  /** Stops running a device whose lease is still this member's (its release comes next), its fence kept meanwhile. */
  private async handBack(deviceId: string, reason: string): Promise<void> {
    const revision = this.held.get(deviceId);
    this.held.delete(deviceId);
    if (revision !== undefined) this.releasing.set(deviceId, revision);
    try {
      await this.options.onLost(deviceId, reason);
    } catch (error) {
      this.options.log.error({ deviceId, err: error }, 'could not stop a device being handed back');
    } finally {
      this.releasing.delete(deviceId);
    }
  }

  /** Stops running a device without writing anything (the lease is gone or about to be). */
  private drop(deviceId: string, reason: string): void {
    if (!this.held.delete(deviceId)) return;
    this.busy.add(deviceId);
    this.options
      .onLost(deviceId, reason)
      .catch((error: unknown) => this.options.log.error({ deviceId, err: error }, 'could not stop a lost device'))
      .finally(() => this.busy.delete(deviceId));
  }

  private async refresh(deviceId: string): Promise<void> {
    const [last] = await this.options.store.readStream(leaseStream(deviceId), { direction: 'backwards', maxCount: 1 });
    if (!last || !isLeaseEvent(last)) return;
    this.learn(
      deviceId,
      last.type === 'LeaseAcquired' ? last.data.owner : undefined,
      last.revision,
      closedAsDeleted(last),
    );
  }

  private learn(deviceId: string, owner: string | undefined, revision: number, closedAsDeleted = false): void {
    const known = this.leases.get(deviceId);
    if (known && known.revision >= revision) return;
    this.leases.set(deviceId, { owner, revision, closedAsDeleted });
    // An owner we have not seen yet gets a full timeout to show a heartbeat.
    if (owner !== undefined) this.liveness.sawOwner(owner);
    if (owner !== this.memberId && this.held.has(deviceId)) {
      this.options.log.warn({ deviceId, owner }, 'another process took the device over; stopping it here');
      this.drop(deviceId, 'taken_over');
    }
  }

  private observe(events: readonly StoredEvent[]): void {
    try {
      this.options.observe?.(events);
    } catch (error) {
      this.options.log.error({ err: error }, 'an observer of the log failed');
    }
    this.liveness.observe(events);
    for (const event of events) {
      if (isLeaseEvent(event) && event.streamId.startsWith(LEASE_STREAM_PREFIX)) {
        this.learn(
          event.data.deviceId,
          event.type === 'LeaseAcquired' ? event.data.owner : undefined,
          event.revision,
          closedAsDeleted(event),
        );
      }
    }
  }
}

/**
 * Liveness is measured in durations on this process's clock: a monotonic one, so that a step of the wall clock
 * (NTP, an operator) neither holds heartbeats back (a step back) nor makes every other member look dead and this
 * one silent (a step forward). Epoch-based at start-up, so the `at` of lease and member events reads as a time.
 */
const monotonicNow = () => performance.timeOrigin + performance.now();

const closedAsDeleted = (event: LeaseEvent) => event.type === 'LeaseReleased' && event.data.reason === 'deleted';

function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}
