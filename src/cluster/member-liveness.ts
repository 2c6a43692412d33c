/**
 * Which members of the cluster are alive, as this member knows them (docs/architecture.md, "Several processes"):
 * its own heartbeats (written on its member stream, and watched for coming back through the log it follows, which
 * says whether that subscription is live), the others' heartbeats and departures seen in that log, and the direct
 * read of a silent member's stream before its devices are taken. DeviceLeases (device-leases.ts) decides leases on it.
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { CommandHandler } from '../commands/command-handler.js';
import type { EventStore, StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import { memberDecider } from './lease-decider.js';
import { MEMBER_EVENT_TYPES, type MemberEvent, memberStream } from './lease-events.js';

const isMemberEvent = eventGuard<MemberEvent>(MEMBER_EVENT_TYPES);

/** Members not heard of for this many lease timeouts are forgotten. */
const PRUNE_AFTER_TIMEOUTS = 10;

export interface MemberLivenessOptions {
  store: EventStore;
  memberId: string;
  timeoutMs: number;
  heartbeatMs: number;
  log: Logger;
  /** Milliseconds on a clock that only moves forward. */
  now: () => number;
}

export class MemberLiveness {
  /** When this member's last heartbeat was recorded (local ms). */
  lastHeartbeat = 0;
  private lastHeartbeatTry = 0;
  /** The heartbeat append under way. */
  private beating: Promise<void> | undefined;
  /** Members by the local time their last heartbeat was seen. */
  private readonly seen = new Map<string, number>();
  /** Members that left, by the local time they were seen leaving. */
  private readonly left = new Map<string, number>();
  /** The revision of each member's stream when it was last seen to move (in the log followed, or read directly). */
  private readonly memberRevisions = new Map<string, number>();
  /** The oldest heartbeat of this member not yet seen back through its subscription: its position and local time. */
  private echo: { position: number; at: number } | undefined;
  private readonly memberCommands: CommandHandler<
    { joined: boolean; left: boolean },
    Parameters<typeof memberDecider.decide>[0],
    MemberEvent
  >;

  constructor(private readonly options: MemberLivenessOptions) {
    this.memberCommands = new CommandHandler({ store: options.store, decider: memberDecider, cacheSize: 4 });
  }

  /** Joins the cluster (its first heartbeat). */
  async join(): Promise<void> {
    const { memberId } = this.options;
    const at = new Date(this.options.now()).toISOString();
    await this.memberCommands.handle(memberStream(memberId), {
      type: 'Join',
      memberId,
      host: hostname(),
      pid: process.pid,
      at,
    });
    this.lastHeartbeat = this.options.now();
  }

  /** Leaves the cluster (a graceful stop); a failure is left to the others' timeout. */
  async leave(at: string): Promise<void> {
    const { memberId } = this.options;
    await this.memberCommands.handle(memberStream(memberId), { type: 'Leave', memberId, at }).catch(() => undefined);
  }

  /**
   * Records a heartbeat, at most every `heartbeatMs`, one at a time: the lease tick and the heartbeat's own timer
   * both ask (src/cluster/device-leases.ts), and a second ask while one is under way waits for that one.
   */
  heartbeat(): Promise<void> {
    if (this.beating) return this.beating;
    const now = this.options.now();
    if (now - this.lastHeartbeatTry < this.options.heartbeatMs) return Promise.resolve();
    this.lastHeartbeatTry = now;
    this.beating = this.recordHeartbeat().finally(() => (this.beating = undefined));
    return this.beating;
  }

  /** Resolves once the heartbeat under way, if any, is done (a stop waits for it). */
  settled(): Promise<void> {
    return this.beating ?? Promise.resolve();
  }

  private async recordHeartbeat(): Promise<void> {
    try {
      const { events, position } = await this.memberCommands.handle(memberStream(this.options.memberId), {
        type: 'Heartbeat',
        memberId: this.options.memberId,
        at: new Date(this.lastHeartbeatTry).toISOString(),
      });
      if (events.length > 0) this.lastHeartbeat = this.lastHeartbeatTry;
      // Watched for in the log followed: the subscription is live while it brings this back.
      if (events.length > 0 && position > 0) this.echo ??= { position, at: this.lastHeartbeatTry };
    } catch (error) {
      this.options.log.warn({ err: error }, 'heartbeat could not be recorded');
    }
  }

  /**
   * How far behind the subscription this member follows the log by is, judged by its own last heartbeat not seen
   * back: `behind` past half a lease timeout (down, stalled, or slow), and then no device is taken.
   */
  following(): { state: 'live' | 'behind'; behindMs: number } {
    const behindMs = this.echo ? Math.max(0, Math.round(this.options.now() - this.echo.at)) : 0;
    return { state: behindMs > this.options.timeoutMs / 2 ? 'behind' : 'live', behindMs };
  }

  /** This member and those seen heartbeating within a timeout that have not left. */
  liveMembers(): Set<string> {
    const now = this.options.now();
    const live = new Set<string>([this.options.memberId]);
    for (const [member, at] of this.seen)
      if (!this.left.has(member) && now - at < this.options.timeoutMs) live.add(member);
    return live;
  }

  /** An owner of a lease not seen yet gets a full timeout to show a heartbeat. */
  sawOwner(owner: string): void {
    if (owner !== this.options.memberId && !this.seen.has(owner)) this.seen.set(owner, this.options.now());
  }

  /**
   * Reads the stream of every member that holds a lease (`owners`) but has not been seen heartbeating for a
   * timeout: one whose stream moved since (its heartbeats were written, the subscription did not bring them) is
   * live again, from now, and added to `live`. One never read before has no revision to compare with: it gets a
   * timeout from now too. A read that fails leaves it live: no device is taken on a guess.
   */
  async confirmSilent(live: Set<string>, owners: Iterable<string | undefined>, stopped: () => boolean): Promise<void> {
    const silent = new Set<string>();
    for (const owner of owners)
      // One known to have left needs no read: its lease is free to take.
      if (owner !== undefined && owner !== this.options.memberId && !live.has(owner) && !this.left.has(owner))
        silent.add(owner);
    for (const member of silent) {
      if (stopped()) return;
      try {
        const [last] = await this.options.store.readStream(memberStream(member), {
          direction: 'backwards',
          maxCount: 1,
        });
        if (!last || !isMemberEvent(last)) continue;
        if (last.type === 'MemberLeft') {
          this.left.set(member, this.options.now());
          this.seen.delete(member);
          continue;
        }
        const known = this.memberRevisions.get(member);
        this.memberRevisions.set(member, last.revision);
        if (known !== undefined && last.revision <= known) continue;
        this.seen.set(member, this.options.now());
        live.add(member);
        this.options.log.info(
          { member },
          'a member that looked silent in the log followed here has heartbeated since: it keeps its devices',
        );
      } catch (error) {
        this.options.log.warn({ member, err: error }, 'could not read the stream of a member that looks silent');
        live.add(member);
      }
    }
  }

  /**
   * Members silent (or gone) for PRUNE_AFTER_TIMEOUTS lease timeouts are forgotten: every process that ever ran
   * (each start is a new member) would otherwise stay in these maps for good. `holders`: the leases' owners.
   */
  prune(holders: ReadonlySet<string | undefined>): void {
    const horizon = this.options.now() - PRUNE_AFTER_TIMEOUTS * this.options.timeoutMs;
    for (const [member, at] of this.seen) if (at < horizon) this.seen.delete(member);
    // A silent member's last revision is kept while it holds a lease: without it, its stream read directly would
    // have nothing to be compared with, and it would look alive again.
    for (const member of this.memberRevisions.keys())
      if (!this.seen.has(member) && !holders.has(member)) this.memberRevisions.delete(member);
    // Nor is a member that left forgotten while it still holds a lease (a release that failed): read again, its
    // stream would say it left just now, and it would be kept another PRUNE_AFTER_TIMEOUTS.
    for (const [member, at] of this.left) if (at < horizon && !holders.has(member)) this.left.delete(member);
  }

  /** The members' events of a batch of the log followed, and whether this member's heartbeat came back. */
  observe(events: readonly StoredEvent[]): void {
    const last = events.at(-1);
    if (this.echo && last && last.position >= this.echo.position) this.echo = undefined;
    for (const event of events) {
      if (!isMemberEvent(event)) continue;
      const member = event.data.memberId;
      if (member === this.options.memberId) continue;
      this.memberRevisions.set(member, Math.max(event.revision, this.memberRevisions.get(member) ?? -1));
      if (event.type === 'MemberLeft') {
        this.left.set(member, this.options.now());
        this.seen.delete(member);
      } else if (!this.left.has(member)) this.seen.set(member, this.options.now());
    }
  }
}
