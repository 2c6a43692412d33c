/**
 * The webhook envelope: `{ id, event, deviceId, timestamp, data }` (docs/architecture.md, "Webhooks"). The domain events
 * that leave the gateway already carry their payload as `data`; `id` is the stored event's id, so it is
 * the same on every attempt and after every restart (receivers deduplicate on it, as `webhook-id`).
 */
import { randomUUID } from 'node:crypto';
import type { StoredEvent } from '../eventstore/event-store.js';
import { ALL_EVENTS, type WebhookEventKind } from './event-kinds.js';
import { isStatusChat } from '../status/status-chat.js';
import { isChannelId } from '../channels/channel-id.js';

// The list lives apart so that the dashboard can bundle it (event-kinds.ts).
export { ALL_EVENTS, WEBHOOK_EVENT_KINDS, type HookEventName, type WebhookEventKind } from './event-kinds.js';

/** Whether a hook listing `events` wants `kind`. */
export const hookWants = (events: readonly string[], kind: string): boolean =>
  events.includes(kind) || events.includes(ALL_EVENTS);

/** Fields kept in the log that never leave in a webhook (a poll's message secret). */
const PRIVATE_FIELDS = ['secret'];

/** The event kind of the test route; never stored, never retried. */
export const TEST_EVENT_KIND = 'webhook.test';

/** Domain event type → the webhook kind it becomes. */
const KIND_OF: Readonly<Record<string, WebhookEventKind>> = {
  MessageReceived: 'message.received',
  MessageStatusChanged: 'message.status',
  SessionStateChanged: 'session.state',
  MessageEdited: 'message.edited',
  MessageRevoked: 'message.revoked',
  PollVoteReceived: 'poll.vote',
  PresenceUpdated: 'presence.update',
  CallReceived: 'call.received',
  GroupParticipantsChanged: 'group.participants',
  GroupUpdated: 'group.updated',
  SessionHealthChanged: 'session.health',
  ChatUpdated: 'chat.updated',
  ChatDeleted: 'chat.deleted',
  MessageDeleted: 'message.deleted',
  HistorySynced: 'history.synced',
  GroupJoinRequested: 'group.join_request',
  LabelUpdated: 'label.updated',
  ChatLabelChanged: 'chat.labels',
  ChannelPostReacted: 'channel.reaction',
};

export const WEBHOOK_SOURCE_EVENT_TYPES: ReadonlySet<string> = new Set(Object.keys(KIND_OF));

export interface WebhookEnvelope<Data = unknown> {
  id: string;
  event: WebhookEventKind | typeof TEST_EVENT_KIND;
  deviceId: string;
  /** When it happened: ISO 8601, UTC. */
  timestamp: string;
  data: Data;
}

/** The envelope of a stored domain event, or undefined when the event is not one that leaves as a webhook. */
export function envelopeOf(stored: StoredEvent): WebhookEnvelope | undefined {
  let kind = KIND_OF[stored.type];
  const deviceId = (stored.data as { deviceId?: unknown } | null)?.deviceId;
  if (!kind || typeof deviceId !== 'string') return undefined;
  let data = stored.data as Record<string, unknown>;
  // Someone's status (a message of `status@broadcast`) leaves as `status.received`, with its own fields.
  if (stored.type === 'MessageReceived' && isStatusChat(data.chatId as string | undefined)) {
    kind = 'status.received';
    data = statusReceivedOf(data);
  } else if (stored.type === 'MessageReceived' && isChannelId(data.chatId as string | undefined)) {
    // A post of a followed channel: never a chat's message, `channel.message` with its own fields.
    kind = 'channel.message';
    data = channelMessageOf(data);
  }
  if (PRIVATE_FIELDS.some((field) => field in data)) {
    data = { ...data };
    for (const field of PRIVATE_FIELDS) delete data[field];
  }
  return { id: stored.id, event: kind, deviceId, timestamp: stored.createdAt.toISOString(), data };
}

/** The `status.received` payload of a received status: who posted it, what it is, its media. */
function statusReceivedOf(data: Record<string, unknown>): Record<string, unknown> {
  const { deviceId, from, waMessageId, type, body, media, timestamp } = data;
  return {
    deviceId,
    from,
    waMessageId,
    type,
    ...(typeof body === 'string' && body !== '' ? { body } : {}),
    ...(media === undefined ? {} : { media }),
    timestamp,
  };
}

/** The `channel.message` payload of a post of a followed channel. */
function channelMessageOf(data: Record<string, unknown>): Record<string, unknown> {
  const { deviceId, chatId, waMessageId, type, body, media, timestamp } = data;
  return {
    deviceId,
    channelId: chatId,
    waMessageId,
    type,
    ...(typeof body === 'string' && body !== '' ? { body } : {}),
    ...(media === undefined ? {} : { media }),
    timestamp,
  };
}

export function testEnvelope(deviceId: string, now = new Date()): WebhookEnvelope<{ message: string }> {
  return {
    id: randomUUID(),
    event: TEST_EVENT_KIND,
    deviceId,
    timestamp: now.toISOString(),
    data: { message: 'This is a test event from the device messaging gateway.' },
  };
}
