/**
 * How much each device did per UTC day: messages sent, received and failed, counted from the log (a rebuild
 * gives the same table). It answers the dashboard's overview (GET /overview) without scanning the message index.
 * The day is the one of the event's record time: what the gateway saw happen that day.
 */
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import type { DeviceEvent } from '../devices/device-events.js';
import type { InboxEvent } from '../inbox/inbox-events.js';
import type { OutboxEvent } from '../outbox/stream/outbox-events.js';
import type { Projection } from '../projections/projection.js';

type HandledEvent =
  | Extract<InboxEvent, { type: 'MessageReceived' }>
  | Extract<OutboxEvent, { type: 'MessageStatusChanged' }>
  | Extract<DeviceEvent, { type: 'DeviceDeleted' }>;
const HANDLED: ReadonlySet<string> = new Set(['MessageReceived', 'MessageStatusChanged', 'DeviceDeleted']);
const isHandled = eventGuard<HandledEvent>(HANDLED);

export interface DayActivity {
  sent: number;
  received: number;
  failed: number;
}

interface Counts extends DayActivity {
  deviceId: string;
  day: string;
}

/** `YYYY-MM-DD` of a time in UTC. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);
const DAY_MS = 86_400_000;

export class DailyActivityReadModel implements Projection {
  readonly name = 'daily-activity';
  readonly version = 1;
  readonly handles: ReadonlySet<string> = HANDLED;
  /** A batch's counts, summed in memory and added to the table once at its end (one upsert per device and day). */
  private pending = new Map<string, Counts>();
  private statements: ReturnType<DailyActivityReadModel['prepare']> | undefined;
  /** The UTC day of the last event counted, and when it began (epoch ms). */
  private lastDay = { start: NaN, day: '' };

  constructor(private readonly db: Database.Database) {}

  setup(db: Database.Database): void {
    db.exec(`CREATE TABLE IF NOT EXISTS daily_activity (
      device_id TEXT NOT NULL,
      day       TEXT NOT NULL,
      sent      INTEGER NOT NULL DEFAULT 0,
      received  INTEGER NOT NULL DEFAULT 0,
      failed    INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (device_id, day)
    ) WITHOUT ROWID;
    -- The overview asks for one day of every device: the key leads with the device and cannot answer it.
    CREATE INDEX IF NOT EXISTS daily_activity_by_day ON daily_activity (day)`);
  }

  reset(db: Database.Database): void {
    db.exec('DELETE FROM daily_activity');
    this.pending.clear();
  }

  apply(event: StoredEvent): void {
    if (!isHandled(event)) return;
    switch (event.type) {
      case 'MessageReceived':
        this.count(event.data.deviceId, event.createdAt).received++;
        return;
      case 'MessageStatusChanged':
        if (event.data.status === 'sent') this.count(event.data.deviceId, event.createdAt).sent++;
        else if (event.data.status === 'failed') this.count(event.data.deviceId, event.createdAt).failed++;
        return;
      case 'DeviceDeleted':
        // Counts of this batch go first, so that nothing of the deleted device is written after its rows went.
        this.flush();
        this.sql().forget.run(event.data.deviceId);
        return;
    }
  }

  flush(): void {
    if (this.pending.size === 0) return;
    const add = this.sql().add;
    for (const counts of this.pending.values())
      add.run(counts.deviceId, counts.day, counts.sent, counts.received, counts.failed);
    this.pending.clear();
  }

  discard(): void {
    this.pending.clear();
  }

  /** Every device's counts of one day, by device id. */
  day(day: string): Map<string, DayActivity> {
    const rows = this.sql().day.all(day);
    return new Map(rows.map((row) => [row.device_id, { sent: row.sent, received: row.received, failed: row.failed }]));
  }

  private count(deviceId: string, at: Date): Counts {
    const ms = at.getTime();
    let last = this.lastDay;
    // Most events fall on the day of the one before: toISOString for each was most of what counting cost.
    if (!(ms >= last.start && ms < last.start + DAY_MS)) {
      last = this.lastDay = { start: ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS), day: utcDay(at) };
    }
    const day = last.day;
    const key = `${deviceId}\u0000${day}`;
    let counts = this.pending.get(key);
    if (!counts) this.pending.set(key, (counts = { deviceId, day, sent: 0, received: 0, failed: 0 }));
    return counts;
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    return {
      add: this.db.prepare<[string, string, number, number, number]>(
        `INSERT INTO daily_activity (device_id, day, sent, received, failed) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (device_id, day) DO UPDATE SET sent = sent + excluded.sent,
           received = received + excluded.received, failed = failed + excluded.failed`,
      ),
      forget: this.db.prepare<[string]>('DELETE FROM daily_activity WHERE device_id = ?'),
      day: this.db.prepare<[string], { device_id: string; sent: number; received: number; failed: number }>(
        'SELECT device_id, sent, received, failed FROM daily_activity WHERE day = ?',
      ),
    };
  }
}
