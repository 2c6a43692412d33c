/**
 * The daily activity read model (src/activity/daily-activity-read-model.ts), fed events directly: each device's
 * sent, received and failed messages counted on the UTC day the gateway recorded them, and a deleted device
 * leaving nothing.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { DailyActivityReadModel } from '../../src/activity/daily-activity-read-model.js';
import type { DeviceEvent } from '../../src/devices/device-events.js';
import type { InboxEvent } from '../../src/inbox/inbox-events.js';
import type { OutboxEvent } from '../../src/outbox/stream/outbox-events.js';
import type { MessageStatusChangedData } from '../../src/messages/message-events.js';
import { type GivenEvent, readModelSpecification } from '../support/read-model-specification.js';

type Event = InboxEvent | OutboxEvent | DeviceEvent;

const spec = readModelSpecification<Event, DailyActivityReadModel>((db) => new DailyActivityReadModel(db));
let seq = 0;
const received = (deviceId: string, at: string): GivenEvent<Event> => ({
  type: 'MessageReceived',
  data: {
    deviceId,
    from: '4915100000001',
    type: 'text',
    body: 'hi',
    timestamp: 1,
    waMessageId: `IN${++seq}`,
  },
  createdAt: new Date(at),
});
const status = (deviceId: string, value: MessageStatusChangedData['status'], at: string): GivenEvent<Event> => ({
  type: 'MessageStatusChanged',
  data: { deviceId, waMessageId: `OUT${++seq}`, status: value, recipient: '4915100000002', timestamp: 1 },
  createdAt: new Date(at),
});
const deleted = (deviceId: string): Event => ({ type: 'DeviceDeleted', data: { deviceId } });
const none = { sent: 0, received: 0, failed: 0 };

describe('daily activity read model', () => {
  it('counts sent, received and failed per device on the UTC day each was recorded, over several batches', () => {
    spec
      .given(
        received('d1', '2026-03-01T23:59:59.999Z'),
        received('d1', '2026-03-02T00:00:00.000Z'),
        status('d1', 'sent', '2026-03-02T08:00:00Z'),
        status('d1', 'delivered', '2026-03-02T08:00:01Z'),
        status('d1', 'read', '2026-03-02T08:00:02Z'),
      )
      .given(
        status('d1', 'sent', '2026-03-02T09:00:00Z'),
        status('d1', 'failed', '2026-03-02T09:30:00Z'),
        status('d2', 'sent', '2026-03-02T10:00:00Z'),
        received('d2', '2026-03-02T11:00:00Z'),
        status('d1', 'cancelled', '2026-03-02T12:00:00Z'),
      )
      .then((activity) => Object.fromEntries(activity.day('2026-03-02')), {
        d1: { sent: 2, received: 1, failed: 1 },
        d2: { sent: 1, received: 1, failed: 0 },
      })
      .then((activity) => Object.fromEntries(activity.day('2026-03-01')), { d1: { ...none, received: 1 } })
      .then((activity) => activity.day('2026-03-03').size, 0);
  });

  it('counts each event on its own day when days alternate, before 1970 too', () => {
    spec
      .given(
        received('d1', '2026-03-01T23:59:59.999Z'),
        received('d1', '2026-03-02T00:00:00.000Z'),
        received('d1', '2026-03-01T00:00:00.000Z'),
        received('d1', '1969-12-31T23:59:59.999Z'),
        received('d1', '1970-01-01T00:00:00.000Z'),
        received('d1', '1969-12-31T00:00:00.000Z'),
      )
      .then((activity) => activity.day('2026-03-01').get('d1')?.received, 2)
      .then((activity) => activity.day('2026-03-02').get('d1')?.received, 1)
      .then((activity) => activity.day('1969-12-31').get('d1')?.received, 2)
      .then((activity) => activity.day('1970-01-01').get('d1')?.received, 1);
  });

  it("forgets a deleted device's days, also counts of the same batch, and counts it again if its id comes back", () => {
    spec
      .given(received('d1', '2026-03-02T00:00:00Z'), received('d2', '2026-03-02T00:00:00Z'))
      .given(status('d1', 'sent', '2026-03-02T01:00:00Z'), deleted('d1'))
      .then((activity) => Object.fromEntries(activity.day('2026-03-02')), { d2: { ...none, received: 1 } })
      .given(received('d1', '2026-03-02T02:00:00Z'))
      .then((activity) => activity.day('2026-03-02').get('d1'), { ...none, received: 1 });
  });

  it("answers a day's activity through an index on the day, not a scan of every device's days", () => {
    const db = new Database(':memory:');
    try {
      new DailyActivityReadModel(db).setup(db);
      const plan = db
        .prepare('EXPLAIN QUERY PLAN SELECT device_id, sent, received, failed FROM daily_activity WHERE day = ?')
        .all('2026-01-01') as Array<{ detail: string }>;
      expect(plan.map((step) => step.detail).join('; ')).toContain('USING INDEX daily_activity_by_day');
    } finally {
      db.close();
    }
  });
});
