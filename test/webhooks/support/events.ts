import { deterministicEventId } from '../../../src/eventstore/event-id.js';
import type { EventStore, NewEvent } from '../../../src/eventstore/event-store.js';
import { type MessageStatusChangedData, outboxStream } from '../../../src/messages/message-events.js';
import { type MessageReceivedData, inboxStream } from '../../../src/inbox/inbox-events.js';
import { type SessionStateChangedData, sessionStream } from '../../../src/sessions/session-events.js';

/** A MessageReceived as the engines append it (issue 3): deterministic id from the device and waMessageId. */
export function messageReceived(
  deviceId: string,
  n: number,
  body = `message ${n}`,
): NewEvent<'MessageReceived', MessageReceivedData> {
  const waMessageId = `WA-${deviceId}-${n}`;
  return {
    id: deterministicEventId(`inbound:${deviceId}:${waMessageId}`),
    type: 'MessageReceived',
    data: {
      deviceId,
      from: '4915112345678',
      type: 'text',
      body,
      timestamp: 1_700_000_000 + n,
      waMessageId,
      pushName: 'Ada',
    },
  };
}

/** Appends MessageReceived n = from..from+count-1 to the device's inbox, concurrently, and answers their ids in order. */
export async function appendReceived(
  store: EventStore,
  deviceId: string,
  count: number,
  from = 1,
): Promise<{ ids: string[]; position: number }> {
  const events = Array.from({ length: count }, (_, i) => messageReceived(deviceId, from + i));
  const results = await Promise.all(events.map((event) => store.append(inboxStream(deviceId), [event])));
  return { ids: events.map((e) => e.id!), position: Math.max(...results.map((r) => r.position)) };
}

export async function appendSessionState(store: EventStore, data: SessionStateChangedData) {
  return store.append(sessionStream(data.deviceId), [{ type: 'SessionStateChanged', data }]);
}

export async function appendStatus(store: EventStore, data: MessageStatusChangedData) {
  return store.append(outboxStream(data.deviceId), [{ type: 'MessageStatusChanged', data }]);
}
