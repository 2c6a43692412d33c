/** The statuses read model (src/status/statuses-read-model.ts): a device's statuses with their viewers, for a day. */
import { describe, it } from 'vitest';
import type { InboxEvent } from '../../src/inbox/inbox-events.js';
import type { OutboxEvent } from '../../src/outbox/stream/outbox-events.js';
import { StatusesReadModel } from '../../src/status/statuses-read-model.js';
import { readModelSpecification } from '../support/read-model-specification.js';

type Event = InboxEvent | OutboxEvent;

const spec = readModelSpecification<Event, StatusesReadModel>((db) => new StatusesReadModel(db));
const T = Date.parse('2026-01-01T00:00:00.000Z');
const HOUR = 3_600_000;

const posted = (waMessageId: string, atMs: number): Event => ({
  type: 'OutboxMessageQueued',
  data: {
    deviceId: 'd1',
    outboxId: `o-${waMessageId}`,
    waMessageId,
    to: 'status@broadcast',
    seq: 1,
    content: { kind: 'text', text: `status ${waMessageId}` },
    createdAt: new Date(atMs).toISOString(),
  },
});
const viewed = (waMessageId: string, viewer: string, atMs: number): Event => ({
  type: 'StatusViewed',
  data: { deviceId: 'd1', waMessageId, viewer, timestamp: Math.floor(atMs / 1000) },
});
const EVER = '2000-01-01T00:00:00.000Z';
const listed = (model: StatusesReadModel) =>
  model.list('d1', EVER).map((s) => [s.waMessageId, s.viewers.map((v) => v.number)]);

describe('statuses read model', () => {
  it('lists each status with its own viewers, and forgets those older than a day when the next is posted', () => {
    spec
      .given(
        posted('S1', T),
        viewed('S1', '491', T + HOUR),
        posted('S2', T + 2 * HOUR),
        viewed('S2', '492', T + 3 * HOUR),
      )
      .given(viewed('S1', '493', T + 4 * HOUR))
      .then(listed, [
        ['S2', ['492']],
        ['S1', ['491', '493']],
      ])
      .given(posted('S3', T + 25 * HOUR))
      .then(listed, [
        ['S3', []],
        ['S2', ['492']],
      ])
      // A view of a status gone is not kept.
      .given(viewed('S1', '494', T + 26 * HOUR))
      .then((model) => model.isStatus('d1', 'S1'), false);
  });
});
