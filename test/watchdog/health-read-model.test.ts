/**
 * The health read model's waits (src/watchdog/health-read-model.ts, src/watchdog/session-waits.ts): which devices
 * wait to hear something after a send, so that the watchdog takes their waits up again when it starts.
 */
import { describe, it } from 'vitest';
import type { DeviceEvent } from '../../src/devices/device-events.js';
import type { InboxEvent } from '../../src/inbox/inbox-events.js';
import type { MessageStatusChangedData } from '../../src/messages/message-events.js';
import type { OutboxEvent } from '../../src/outbox/stream/outbox-events.js';
import type { HealthEvent } from '../../src/watchdog/health-events.js';
import { HealthReadModel } from '../../src/watchdog/health-read-model.js';
import { type GivenEvent, readModelSpecification } from '../support/read-model-specification.js';

type Event = InboxEvent | OutboxEvent | DeviceEvent | HealthEvent;

const spec = readModelSpecification<Event, HealthReadModel>((db) => new HealthReadModel(db));
let seq = 0;
const status = (deviceId: string, value: MessageStatusChangedData['status']): GivenEvent<Event> => ({
  type: 'MessageStatusChanged',
  data: { deviceId, waMessageId: `OUT${++seq}`, status: value, recipient: '4915100000002', timestamp: 1 },
});
const received = (deviceId: string): GivenEvent<Event> => ({
  type: 'MessageReceived',
  data: { deviceId, from: '4915100000001', type: 'text', body: 'hi', timestamp: 1, waMessageId: `IN${++seq}` },
});
const waiting = (model: HealthReadModel) => model.waitingDevices().sort();

describe('health read model: devices waiting after a send', () => {
  it('a send gone out starts a wait; a receipt, or anything received, ends it; a cancelled or failed one does not', () => {
    spec
      .given(status('a', 'sent'), status('b', 'sent'), status('c', 'cancelled'), status('c', 'failed'))
      .then(waiting, ['a', 'b'])
      .given(status('a', 'sent'), status('a', 'delivered'), received('b'))
      .then(waiting, [])
      .given(status('b', 'sent'), status('b', 'read'), status('b', 'sent'))
      .then(waiting, ['b']);
  });

  it('a deleted device waits no more', () => {
    spec
      .given(status('gone', 'sent'))
      .then(waiting, ['gone'])
      .given({ type: 'DeviceDeleted', data: { deviceId: 'gone' } })
      .then(waiting, []);
  });
});
