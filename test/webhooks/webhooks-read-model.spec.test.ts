/**
 * The webhooks read model (src/webhooks/webhooks-read-model.ts) as given / then: the webhooks (a device's hook, its
 * further webhooks, the global ones) and one delivery per webhook and event it asks for, with its progress; a
 * deleted device leaving no webhook and nothing pending. (Removed hooks, dropped kinds and sealed URLs in detail:
 * webhooks-read-model.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import type { DeviceEvent, HookEvent } from '../../src/devices/device-events.js';
import type { InboxEvent } from '../../src/inbox/inbox-events.js';
import type { SessionEvent } from '../../src/sessions/session-events.js';
import type { DeliveryEvent, WebhookDeliveryAttemptedData } from '../../src/webhooks/delivery-events.js';
import { GLOBAL_SCOPE, type WebhookSettingsEvent } from '../../src/webhooks/webhook-settings-events.js';
import { WebhooksReadModel } from '../../src/webhooks/webhooks-read-model.js';
import { type GivenEvent, readModelSpecification } from '../support/read-model-specification.js';

type Event = HookEvent | DeviceEvent | InboxEvent | SessionEvent | DeliveryEvent | WebhookSettingsEvent;

const spec = readModelSpecification<Event, WebhooksReadModel>((db) => new WebhooksReadModel(db));
const AT = '2026-03-01T10:00:00.000Z';
const SECRET = 'whsec_AAAA';
/** The log position a given event gets: the helper numbers them from 1 (`event-<position>`). */
let position = 0;
const next = <E extends GivenEvent<Event>>(event: E): E => (position++, event);
const at = (pos: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + pos * 1_000).toISOString();

const hook = (deviceId: string, events: string[], url = `https://${deviceId}.example/hook`) =>
  next({ type: 'HooksConfigured', data: { deviceId, url, events, secret: SECRET, at: AT } });
const webhook = (
  type: 'WebhookCreated' | 'WebhookUpdated',
  webhookId: string,
  events: string[],
  more: { deviceId?: string; devices?: string[] } = {},
) =>
  next({
    type,
    data: { webhookId, url: `https://${webhookId}.example/`, events, secret: SECRET, at: AT, ...more },
  });
const received = (deviceId: string) =>
  next<GivenEvent<Event>>({
    type: 'MessageReceived',
    data: { deviceId, from: '4915100000001', type: 'text', body: 'hi', timestamp: 1, waMessageId: `IN${position}` },
  });
const online = (deviceId: string) =>
  next<GivenEvent<Event>>({
    type: 'SessionStateChanged',
    data: { deviceId, state: 'online', previousState: 'connecting', phone: '4915100000002', reason: 'scanned' },
  });
const attempted = (deviceId: string, deliveryId: string, more: Partial<WebhookDeliveryAttemptedData>) =>
  next<GivenEvent<Event>>({
    type: 'WebhookDeliveryAttempted',
    data: {
      deviceId,
      deliveryId,
      round: 0,
      attempt: 1,
      outcome: 'delivered',
      status: 200,
      durationMs: 12,
      attemptedAt: AT,
      ...more,
    },
  });
const retry = (deviceId: string, deliveryId: string, webhookId?: string) =>
  next<GivenEvent<Event>>({
    type: 'WebhookDeliveryRetryRequested',
    data: { deviceId, deliveryId, ...(webhookId === undefined ? {} : { webhookId }) },
  });
const deleted = (deviceId: string) => next<GivenEvent<Event>>({ type: 'DeviceDeleted', data: { deviceId } });
const pendingIds = (lane: string | { deviceId: string; webhookId: string }) => (model: WebhooksReadModel) =>
  model.pendingHeads(lane, 100).map((delivery) => delivery.id);

describe('webhooks read model (given / then)', () => {
  it("keeps a device's hook as configured last, and a delivery of each later event of a kind it asks for", () => {
    position = 0;
    spec
      .given(received('d1'), hook('d1', ['message.received']))
      .given(received('d1'), online('d1'), received('d2'))
      .then((model) => model.hook('d1'), {
        url: 'https://d1.example/hook',
        events: ['message.received'],
        secret: SECRET,
        updatedAt: AT,
      })
      .then((model) => model.hook('d2'), undefined)
      .then((model) => model.hookUrl('d1'), 'https://d1.example/hook')
      .then((model) => model.configured('d1', 'default'), {
        url: 'https://d1.example/hook',
        events: ['message.received'],
      })
      .then(pendingIds('d1'), ['event-3'])
      .then((model) => model.delivery('d1', 'event-3'), {
        id: 'event-3',
        event: 'message.received',
        status: 'pending',
        attempts: 0,
        nextAttemptAt: at(3),
        createdAt: at(3),
      })
      .then((model) => model.delivery('d1', 'event-1'), undefined)
      .then((model) => model.devicesWithPending(), ['d1'])
      .then((model) => model.lanesWithPending(), [{ deviceId: 'd1', webhookId: 'default' }])
      .then((model) => Object.fromEntries(model.backlogByDevice()), { d1: { pending: 1, oldestPendingAt: at(3) } })
      .then((model) => model.webhooksWithPending('d1'), ['default']);
  });

  it('folds the attempts of a delivery: retrying keeps it pending until due, then delivered or failed', () => {
    position = 0;
    spec
      .given(hook('d1', ['*']), received('d1'), received('d1'))
      .given(
        attempted('d1', 'event-2', {
          outcome: 'retrying',
          status: 500,
          nextAttemptAt: '2026-03-01T10:00:05.000Z',
        }),
        attempted('d1', 'event-3', { outcome: 'failed', status: undefined, error: 'connection refused', attempt: 1 }),
      )
      .then(
        (model) => model.pendingHeads('d1', 10),
        [
          expect.objectContaining({
            id: 'event-2',
            attempts: 1,
            nextAttemptAt: Date.parse('2026-03-01T10:00:05.000Z'),
          }),
        ],
      )
      .then((model) => model.delivery('d1', 'event-3'), {
        id: 'event-3',
        event: 'message.received',
        status: 'failed',
        attempts: 1,
        lastError: 'unreachable',
        lastAttemptAt: AT,
        lastDurationMs: 12,
        createdAt: at(3),
      })
      .given(attempted('d1', 'event-2', { attempt: 2 }))
      .then(
        (model) => model.delivery('d1', 'event-2'),
        expect.objectContaining({ status: 'delivered', attempts: 2, lastStatus: 200 }),
      )
      .then(
        (model) => model.list('d1', { limit: 10 }).items.map((d) => [d.id, d.status]),
        [
          ['event-3', 'failed'],
          ['event-2', 'delivered'],
        ],
      )
      .then((model) => model.list('d1', { limit: 10, status: 'failed' }).items.map((d) => d.id), ['event-3'])
      .then((model) => model.devicesWithPending(), [])
      // A retry of a finished delivery makes it pending again, for one more attempt.
      .given(retry('d1', 'event-3'))
      .then(
        (model) => model.pendingHeads('d1', 10),
        [expect.objectContaining({ id: 'event-3', attempts: 1, round: 1, finalRound: true })],
      );
  });

  it("keeps a device's further webhooks and the global ones, each with deliveries of its own kinds and devices", () => {
    position = 0;
    const own = { deviceId: 'd1', webhookId: 'wh_1' };
    const globalD1 = { deviceId: 'd1', webhookId: 'gwh_1' };
    const globalD2 = { deviceId: 'd2', webhookId: 'gwh_1' };
    spec
      .given(
        webhook('WebhookCreated', 'wh_1', ['session.state'], { deviceId: 'd1' }),
        webhook('WebhookCreated', 'gwh_1', ['message.received'], { devices: ['d1', 'd2'] }),
      )
      .given(online('d1'), received('d1'), received('d2'), received('d3'))
      .then(
        (model) => model.webhooks('d1').map((w) => [w.webhookId, w.deviceId, w.events]),
        [['wh_1', 'd1', ['session.state']]],
      )
      .then((model) => model.webhooks(GLOBAL_SCOPE).map((w) => [w.webhookId, w.devices]), [['gwh_1', ['d1', 'd2']]])
      .then((model) => [model.countOf('d1'), model.countOf('d2'), model.countOf(GLOBAL_SCOPE)], [1, 0, 1])
      .then((model) => model.webhookUrl(GLOBAL_SCOPE, 'gwh_1'), 'https://gwh_1.example/')
      .then((model) => model.target('d3', 'gwh_1'), undefined)
      .then((model) => model.target('d2', 'gwh_1')?.webhookId, 'gwh_1')
      .then(pendingIds(own), ['event-3'])
      .then(pendingIds(globalD1), ['event-4'])
      .then(pendingIds(globalD2), ['event-5'])
      .then((model) => model.pendingAfter(globalD1, 4, 10), [])
      .then(
        (model) => model.webhookDeliveries('gwh_1', undefined, { limit: 10 }).items.map((d) => [d.id, d.deviceId]),
        [
          ['event-5', 'd2'],
          ['event-4', 'd1'],
        ],
      )
      .then((model) => model.webhookDelivery('wh_1', 'd1', 'event-3')?.event, 'session.state')
      // The global webhook leaves d2: what waited for d2 ends as failed; d1's stays.
      .given(webhook('WebhookUpdated', 'gwh_1', ['message.received'], { devices: ['d1'] }), received('d2'))
      .then(pendingIds(globalD2), [])
      .then((model) => model.webhookDelivery('gwh_1', 'd2', 'event-5')?.status, 'failed')
      .then(pendingIds(globalD1), ['event-4'])
      .given(next<GivenEvent<Event>>({ type: 'WebhookDeleted', data: { deviceId: 'd1', webhookId: 'wh_1' } }))
      .then((model) => model.webhooks('d1'), [])
      .then((model) => model.webhookDelivery('wh_1', 'd1', 'event-3')?.status, 'failed');
  });

  it("a deleted device's webhooks go and its pending deliveries fail; other devices' stay", () => {
    position = 0;
    spec
      .given(hook('d1', ['*']), hook('d2', ['*']), webhook('WebhookCreated', 'wh_1', ['*'], { deviceId: 'd1' }))
      .given(received('d1'), received('d2'), deleted('d1'))
      .then((model) => model.hook('d1'), undefined)
      .then((model) => model.webhooks('d1'), [])
      .then(
        (model) => model.delivery('d1', 'event-4'),
        expect.objectContaining({ status: 'failed', lastError: 'the device was deleted' }),
      )
      .then((model) => model.webhookDelivery('wh_1', 'd1', 'event-4')?.status, 'failed')
      .then((model) => model.devicesWithPending(), ['d2'])
      .then((model) => model.hook('d2')?.url, 'https://d2.example/hook');
  });

  it('a batch rolled back at its checkpoint and applied again delivers nothing of an event before the hook', () => {
    position = 0;
    spec
      .given(online('d1'))
      .givenRetried(received('d1'), hook('d1', ['message.received']), received('d1'))
      .then(pendingIds('d1'), ['event-4'])
      .then((model) => model.delivery('d1', 'event-2'), undefined);
  });
});
