/**
 * What pacing needs to judge a send, looked up where it is kept: the device's policy (the settings read model),
 * the day its account was first linked (the first `online` of its session stream, read once and kept), and when
 * the recipient last wrote and how many messages it was sent (the message index's table).
 */
import type Database from 'better-sqlite3';
import type { EventStore } from '../../eventstore/event-store.js';
import { sessionStream } from '../../sessions/session-events.js';
import type { DeviceSettings } from '../../settings/settings-events.js';
import type { PacingContext, PacingPolicy } from './pacing.js';

/** Session events read at a time while looking for the first link. */
const PAGE = 500;
/** A device not linked yet is not looked for again within this long (the drainer asks before every first try). */
const NOT_LINKED_TTL_MS = 5_000;

export interface RecipientActivity {
  /** Epoch ms of the latest message the number wrote to the account; undefined: it never wrote. */
  lastInboundAt: number | undefined;
  /** Messages sent or queued to it (not those cancelled, failed or expired), counted up to `countUpTo`. */
  sent: number;
}

export class PacingContexts {
  /** Epoch ms of each device's first link, once found (it never changes). */
  private readonly linked = new Map<string, number>();
  /** Devices not linked when last looked: how far their session stream was read, and when. */
  private readonly notLinked = new Map<string, { readUpTo: number; at: number }>();
  private statements: ReturnType<PacingContexts['prepare']> | undefined;

  constructor(
    private readonly store: EventStore,
    private readonly settings: { recorded(deviceId: string): DeviceSettings },
    /** The read models' database, where the message index keeps chat_messages. */
    private readonly db: Database.Database,
    private readonly now: () => number = Date.now,
  ) {}

  policy(deviceId: string): PacingPolicy | undefined {
    return this.settings.recorded(deviceId).pacing;
  }

  /** The context of a send to `to`, or undefined when nothing paces the device's sends. */
  async of(deviceId: string, to: string): Promise<PacingContext | undefined> {
    const policy = this.policy(deviceId);
    if (!policy || !(policy.warmup || policy.dailyCap || policy.quietHours || policy.typing)) return undefined;
    const linkedAt = policy.warmup ? await this.linkedAt(deviceId) : undefined;
    const lastInboundAt = policy.quietHours?.allowReplies ? this.activity(deviceId, to, 0).lastInboundAt : undefined;
    return {
      policy,
      ...(linkedAt === undefined ? {} : { linkedAt }),
      ...(lastInboundAt === undefined ? {} : { lastInboundAt }),
    };
  }

  /** What the unanswered limit needs of a recipient, or undefined when the device has no limit. */
  unanswered(deviceId: string, to: string): { limit: number; answered: boolean; sent: number } | undefined {
    const limit = this.policy(deviceId)?.unansweredLimit;
    if (!limit) return undefined;
    const activity = this.activity(deviceId, to, limit);
    return { limit, answered: activity.lastInboundAt !== undefined, sent: activity.sent };
  }

  activity(deviceId: string, chatId: string, countUpTo: number): RecipientActivity {
    const sql = this.sql();
    const last = sql.lastInbound.get(deviceId, chatId)?.at ?? null;
    const sent = countUpTo > 0 ? (sql.sent.get(deviceId, chatId, countUpTo)?.n ?? 0) : 0;
    return { lastInboundAt: last === null ? undefined : last * 1000, sent };
  }

  /** Epoch ms the device first came online with an account (day 0 of the warm-up); undefined: never yet. */
  async linkedAt(deviceId: string): Promise<number | undefined> {
    const known = this.linked.get(deviceId);
    if (known !== undefined) return known;
    const notLinked = this.notLinked.get(deviceId);
    if (notLinked && this.now() - notLinked.at < NOT_LINKED_TTL_MS) return undefined;
    // Read on from where the last look ended: what it read holds no `online`.
    for (let from = notLinked?.readUpTo ?? 0; ;) {
      const events = await this.store.readStream(sessionStream(deviceId), { fromRevision: from, maxCount: PAGE });
      const online = events.find(
        (event) => event.type === 'SessionStateChanged' && (event.data as { state?: string }).state === 'online',
      );
      if (online) {
        const at = online.createdAt.getTime();
        this.linked.set(deviceId, at);
        this.notLinked.delete(deviceId);
        return at;
      }
      if (events.length > 0) from = events[events.length - 1].revision + 1;
      if (events.length < PAGE) {
        this.notLinked.set(deviceId, { readUpTo: from, at: this.now() });
        return undefined;
      }
    }
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    return {
      // chat_messages_by_chat covers both (its condition: no reactions).
      lastInbound: this.db.prepare<[string, string], { at: number | null }>(
        "SELECT MAX(at) AS at FROM chat_messages WHERE device_id = ? AND chat_id = ? AND from_me = 0 AND type <> 'reaction'",
      ),
      sent: this.db.prepare<[string, string, number], { n: number }>(
        "SELECT COUNT(*) AS n FROM (SELECT 1 FROM chat_messages WHERE device_id = ? AND chat_id = ? AND from_me = 1 AND type <> 'reaction' AND (status IS NULL OR status NOT IN ('cancelled', 'failed', 'expired')) LIMIT ?)",
      ),
    };
  }
}
