/**
 * The webhook payloads as TypeBox schemas: one per event kind, published in /openapi.json's `webhooks`
 * section and checked against every envelope a sandbox run emits (test/webhooks/webhook-schemas.e2e.test.ts).
 * The domain's event data types are declared in their own modules; the assertions at the bottom make the
 * compiler refuse a schema that no longer matches its type, in either direction.
 */
import Type, { type Static, type TSchema } from 'typebox';
import {
  INBOUND_MEDIA_STATUSES,
  INBOUND_TYPES,
  MESSAGE_STATUSES,
  PRESENCE_STATES,
  type MessageStatusChangedData,
} from '../messages/message-events.js';
import type {
  CallReceivedData,
  ChatDeletedData,
  ChatLabelChangedData,
  ChatUpdatedData,
  HistorySyncedData,
  LabelUpdatedData,
  MessageDeletedData,
  MessageEditedData,
  MessageReceivedData,
  MessageRevokedData,
  PollVoteReceivedData,
  PresenceUpdatedData,
} from '../inbox/inbox-events.js';
import { SESSION_STATES, type SessionStateChangedData } from '../sessions/session-events.js';
import { GROUP_ID_PATTERN } from '../messages/chat-id.js';
import {
  EPHEMERAL_DURATIONS,
  JOIN_REQUEST_ACTIONS,
  PARTICIPANT_ACTIONS,
  type GroupJoinRequestData,
  type GroupParticipantsChangedData,
  type GroupUpdatedData,
} from '../groups/group-events.js';
import { TEST_EVENT_KIND, type WebhookEventKind } from './envelope.js';

const UnixSeconds = Type.Integer({ description: 'Unix seconds.' });
const MediaSchema = Type.Object({
  mimetype: Type.String(),
  size: Type.Optional(Type.Integer()),
  filename: Type.Optional(Type.String()),
  url: Type.Optional(
    Type.String({
      description: 'Where the bytes are served (GET /devices/:id/messages/:waMessageId/media), once downloaded.',
    }),
  ),
  sha256: Type.Optional(Type.String()),
  status: Type.Optional(Type.Enum(INBOUND_MEDIA_STATUSES)),
});
/** Payloads are closed: a field the schema does not declare is a field receivers were not promised. */
const closed = { additionalProperties: false } as const;
const DeviceId = Type.String({ description: 'The device the event belongs to.' });
const ChatId = Type.String({ description: 'The chat: a number, a group id (`…@g.us`) or `<digits>@lid`.' });
const Sender = Type.String({
  description: 'The sender: digits with the country code, or `<digits>@lid` when WhatsApp hides the number.',
});
const ErrorSchema = Type.Object({ code: Type.String(), message: Type.String(), reason: Type.Optional(Type.String()) });

const ContactCard = Type.Object({
  name: Type.String(),
  phone: Type.String(),
  organization: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
});

export const MessageReceivedPayload = Type.Object(
  {
    deviceId: DeviceId,
    from: Sender,
    type: Type.Enum(INBOUND_TYPES),
    body: Type.String({ description: 'Text or caption; "" when none.' }),
    timestamp: UnixSeconds,
    waMessageId: Type.String(),
    pushName: Type.Optional(Type.String()),
    media: Type.Optional(MediaSchema),
    location: Type.Optional(
      Type.Object({
        latitude: Type.Number(),
        longitude: Type.Number(),
        name: Type.Optional(Type.String()),
        address: Type.Optional(Type.String()),
      }),
    ),
    chatId: Type.Optional(ChatId),
    isGroup: Type.Optional(Type.Boolean()),
    fromMe: Type.Optional(
      Type.Boolean({ description: 'Sent by the account itself, from the phone or another linked device.' }),
    ),
    participant: Type.Optional(Type.String({ description: 'The sender inside a group.' })),
    quoted: Type.Optional(
      Type.Object({
        waMessageId: Type.String(),
        from: Type.String(),
        type: Type.Enum(INBOUND_TYPES),
        body: Type.String(),
      }),
    ),
    mentions: Type.Optional(Type.Array(Type.String())),
    contacts: Type.Optional(Type.Array(ContactCard)),
    poll: Type.Optional(
      Type.Object({ question: Type.String(), options: Type.Array(Type.String()), multipleAnswers: Type.Boolean() }),
    ),
    reaction: Type.Optional(
      Type.Object({ messageId: Type.String(), emoji: Type.String({ description: '"" removes a reaction.' }) }),
    ),
  },
  { ...closed, description: 'A message the device received (or that the account sent from elsewhere: `fromMe`).' },
);

export const MessageStatusPayload = Type.Object(
  {
    deviceId: DeviceId,
    waMessageId: Type.String(),
    status: Type.Enum(
      MESSAGE_STATUSES.filter(
        (status): status is Exclude<(typeof MESSAGE_STATUSES)[number], 'queued'> => status !== 'queued',
      ),
    ),
    recipient: Type.String({ description: 'The chat the message went to.' }),
    outboxId: Type.Optional(Type.String({ description: 'Set when the gateway sent it.' })),
    timestamp: UnixSeconds,
    error: Type.Optional(
      Type.Object(
        {
          code: Type.String(),
          message: Type.String(),
          reason: Type.Optional(
            Type.String({
              description: 'For `media_unavailable`: http_status, dns_failure, timeout, too_large, wrong_type, …',
            }),
          ),
        },
        { description: 'Why, for `failed`, `expired` and a cancel by deletion of the device.' },
      ),
    ),
  },
  {
    ...closed,
    description: "A sent message's new status: sent, delivered, read, played, failed, cancelled, deleted or expired.",
  },
);

export const SessionStatePayload = Type.Object(
  {
    deviceId: DeviceId,
    state: Type.Enum(SESSION_STATES),
    previousState: Type.Enum(SESSION_STATES),
    phone: Type.Optional(Type.String({ description: "The linked account's number." })),
    reason: Type.Optional(
      Type.String({
        description:
          'Why, in a word or two: opened, qr_issued, connected, connection_lost, connect_failed, attempt_failed, closed_by_user, …',
      }),
    ),
    error: Type.Optional(ErrorSchema),
    attempt: Type.Optional(Type.Integer({ description: 'While `reconnecting`: the number of the try that failed.' })),
    nextRetryAt: Type.Optional(
      Type.String({ format: 'date-time', description: 'While `reconnecting`: when the next try starts.' }),
    ),
  },
  { ...closed, description: 'A change of the session (or a failed try while `reconnecting`).' },
);

const ChangedByThisAccount = Type.Optional(
  Type.Boolean({ description: 'True when this account made the change (on the phone or another linked device).' }),
);
export const MessageEditedPayload = Type.Object(
  {
    deviceId: DeviceId,
    chatId: ChatId,
    from: Sender,
    fromMe: ChangedByThisAccount,
    waMessageId: Type.String(),
    body: Type.String(),
    timestamp: UnixSeconds,
  },
  closed,
);
export const MessageRevokedPayload = Type.Object(
  {
    deviceId: DeviceId,
    chatId: ChatId,
    from: Sender,
    fromMe: ChangedByThisAccount,
    waMessageId: Type.String(),
    timestamp: UnixSeconds,
  },
  closed,
);
export const PollVotePayload = Type.Object(
  {
    deviceId: DeviceId,
    chatId: ChatId,
    from: Sender,
    pollMessageId: Type.String(),
    selectedOptions: Type.Array(Type.String(), {
      description: 'The options the voter has chosen now (empty: the vote was withdrawn).',
    }),
    timestamp: UnixSeconds,
  },
  closed,
);
export const PresenceUpdatePayload = Type.Object(
  {
    deviceId: DeviceId,
    chatId: ChatId,
    from: Sender,
    state: Type.Enum(PRESENCE_STATES),
    lastSeen: Type.Optional(
      Type.String({ format: 'date-time', description: 'When the contact was last online, when known.' }),
    ),
  },
  closed,
);
export const CallReceivedPayload = Type.Object(
  {
    deviceId: DeviceId,
    callId: Type.String(),
    from: Sender,
    isVideo: Type.Boolean(),
    isGroup: Type.Boolean(),
    rejected: Type.Boolean(),
    timestamp: UnixSeconds,
  },
  closed,
);
const GroupId = Type.String({ pattern: GROUP_ID_PATTERN, description: 'The group (`120363…@g.us`).' });
const Member = Type.String({ description: 'A number (digits), or `<digits>@lid` when the network hides it.' });
export const GroupUpdatedPayload = Type.Object(
  {
    deviceId: DeviceId,
    groupId: GroupId,
    subject: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    announce: Type.Optional(Type.Boolean({ description: 'Only admins may send messages.' })),
    locked: Type.Optional(Type.Boolean({ description: 'Only admins may change its settings.' })),
    ephemeral: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: `Disappearing messages, seconds (0: off; WhatsApp offers ${EPHEMERAL_DURATIONS.join(', ')}).`,
      }),
    ),
    joinApproval: Type.Optional(Type.Boolean({ description: 'Joining by link needs an admin to approve.' })),
    membersCanAdd: Type.Optional(Type.Boolean({ description: 'Every member may add participants.' })),
    by: Type.Optional(Member),
  },
  { ...closed, description: 'What changed (only the fields that did), and who changed it when known.' },
);
export const GroupParticipantsPayload = Type.Object(
  {
    deviceId: DeviceId,
    groupId: GroupId,
    action: Type.Enum(PARTICIPANT_ACTIONS),
    participants: Type.Array(Member),
    by: Type.Optional(Member),
  },
  closed,
);
export const ChatUpdatedPayload = Type.Object(
  {
    deviceId: DeviceId,
    chatId: ChatId,
    archived: Type.Optional(Type.Boolean()),
    pinned: Type.Optional(Type.Boolean()),
    mutedUntil: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { description: 'null (not muted), an ISO 8601 time or "forever".' }),
    ),
    unread: Type.Optional(Type.Boolean({ description: 'Marked unread (true) or read (false) as a whole.' })),
  },
  { ...closed, description: "What changed of the chat's settings (only the fields that did)." },
);
export const ChatDeletedPayload = Type.Object(
  {
    deviceId: DeviceId,
    chatId: ChatId,
    cleared: Type.Boolean({ description: 'true: emptied, the chat kept; false: the chat deleted for this account.' }),
  },
  closed,
);
export const MessageDeletedPayload = Type.Object(
  { deviceId: DeviceId, chatId: ChatId, waMessageId: Type.String() },
  { ...closed, description: 'Deleted for this account only.' },
);
export const HistorySyncedPayload = Type.Object(
  {
    deviceId: DeviceId,
    chats: Type.Integer({ minimum: 0, description: 'Chats in this chunk of the history.' }),
    messages: Type.Integer({ minimum: 0, description: 'Messages in this chunk (those already recorded included).' }),
    progress: Type.Integer({ minimum: 0, maximum: 100, description: 'How far the sync is, in percent.' }),
    final: Type.Boolean({ description: 'The last chunk of this sync.' }),
  },
  { ...closed, description: 'A chunk of the history WhatsApp sent was imported.' },
);
export const LabelUpdatedPayload = Type.Object(
  {
    deviceId: DeviceId,
    labelId: Type.String({ description: 'The label (WhatsApp Business).' }),
    name: Type.String(),
    color: Type.Integer({ minimum: 0, maximum: 19, description: "WhatsApp's colour index." }),
    deleted: Type.Boolean({ description: 'The label was deleted.' }),
  },
  { ...closed, description: 'A label made, changed or deleted (through the API or on the phone).' },
);
export const ChatLabelsPayload = Type.Object(
  {
    deviceId: DeviceId,
    chatId: ChatId,
    labelId: Type.String(),
    action: Type.Union([Type.Literal('add'), Type.Literal('remove')]),
  },
  { ...closed, description: 'A label put on a chat or taken off it (through the API or on the phone).' },
);
export const GroupJoinRequestPayload = Type.Object(
  {
    deviceId: DeviceId,
    groupId: GroupId,
    number: Member,
    action: Type.Enum(JOIN_REQUEST_ACTIONS, {
      description: '`created`: asked to join; `revoked`: withdrew the request.',
    }),
  },
  closed,
);
export const StatusReceivedPayload = Type.Object(
  {
    deviceId: DeviceId,
    from: Sender,
    waMessageId: Type.String(),
    type: Type.Enum(INBOUND_TYPES),
    body: Type.Optional(Type.String({ description: 'The text, or the caption.' })),
    media: Type.Optional(MediaSchema),
    timestamp: UnixSeconds,
  },
  { ...closed, description: "Someone's status (story), with its media downloaded like any inbound media." },
);
export const ChannelMessagePayload = Type.Object(
  {
    deviceId: DeviceId,
    channelId: Type.String({ description: 'The channel: `<digits>@newsletter`.' }),
    waMessageId: Type.String(),
    type: Type.Enum(INBOUND_TYPES),
    body: Type.Optional(Type.String({ description: 'The text, or the caption.' })),
    media: Type.Optional(MediaSchema),
    timestamp: UnixSeconds,
  },
  { ...closed, description: 'A new post of a channel the account follows.' },
);
export const ChannelReactionPayload = Type.Object(
  {
    deviceId: DeviceId,
    channelId: Type.String({ description: 'The channel: `<digits>@newsletter`.' }),
    waMessageId: Type.String({ description: 'The post reacted to.' }),
    emoji: Type.String({ description: 'The emoji; `""` when a reaction taken back does not say which.' }),
    removed: Type.Boolean({ description: 'A reaction taken back.' }),
  },
  {
    ...closed,
    description:
      "Someone reacted to a post of a channel the account follows, as the network tells it (an owner's or admin's account hears them); the counts: GET …/channels/:channelId/messages.",
  },
);
export const WebhookTestPayload = Type.Object({ message: Type.String() }, closed);

export const SessionHealthPayload = Type.Object(
  {
    deviceId: DeviceId,
    health: Type.Enum(['ok', 'silent'] as const),
    previousHealth: Type.Enum(['ok', 'silent'] as const),
    reason: Type.Enum(['silent', 'heard'] as const, {
      description:
        '`silent`: nothing heard for WATCHDOG_SILENCE while sends went out; `heard`: something arrived again.',
    }),
    silentSince: Type.Optional(
      Type.String({ format: 'date-time', description: 'With `silent`: the first send nothing was heard after.' }),
    ),
    rebooting: Type.Optional(
      Type.Boolean({
        description: 'With `silent`: the session is rebooted for it (WATCHDOG_REBOOT, once per silence).',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Every kind with its payload and a line for the reader. */
export const WEBHOOK_PAYLOADS: Readonly<
  Record<WebhookEventKind | typeof TEST_EVENT_KIND, { schema: TSchema; summary: string }>
> = {
  'message.received': { schema: MessageReceivedPayload, summary: 'A message was received' },
  'message.status': { schema: MessageStatusPayload, summary: 'A sent message changed status' },
  'session.state': { schema: SessionStatePayload, summary: 'The session changed state' },
  'message.edited': { schema: MessageEditedPayload, summary: 'A received message was edited' },
  'message.revoked': { schema: MessageRevokedPayload, summary: 'A received message was deleted for everyone' },
  'poll.vote': { schema: PollVotePayload, summary: 'Someone voted in a poll' },
  'presence.update': { schema: PresenceUpdatePayload, summary: 'A contact is typing, recording, online or offline' },
  'call.received': { schema: CallReceivedPayload, summary: 'A call came in' },
  'group.updated': { schema: GroupUpdatedPayload, summary: "A group's subject, description or settings changed" },
  'group.participants': {
    schema: GroupParticipantsPayload,
    summary: 'Participants were added, removed, promoted or demoted',
  },
  'session.health': {
    schema: SessionHealthPayload,
    summary: 'An online session went silent (hears nothing while it sends), or hears again',
  },
  'chat.updated': { schema: ChatUpdatedPayload, summary: 'A chat was archived, pinned, muted or marked (un)read' },
  'chat.deleted': { schema: ChatDeletedPayload, summary: 'A chat was deleted or cleared for this account' },
  'message.deleted': { schema: MessageDeletedPayload, summary: 'A message was deleted for this account only' },
  'history.synced': { schema: HistorySyncedPayload, summary: "A chunk of the account's history was imported" },
  'group.join_request': {
    schema: GroupJoinRequestPayload,
    summary: 'Someone asked to join a group that needs approval, or withdrew the request',
  },
  'status.received': { schema: StatusReceivedPayload, summary: 'A contact posted a status (story)' },
  'channel.message': { schema: ChannelMessagePayload, summary: 'A followed channel posted' },
  'channel.reaction': { schema: ChannelReactionPayload, summary: "Someone reacted to a channel's post" },
  'label.updated': { schema: LabelUpdatedPayload, summary: 'A label was made, changed or deleted (WhatsApp Business)' },
  'chat.labels': { schema: ChatLabelsPayload, summary: 'A label was put on a chat or taken off it' },
  [TEST_EVENT_KIND]: { schema: WebhookTestPayload, summary: 'A test event (POST /devices/:id/hooks/test)' },
};

/** The envelope a receiver gets for `kind`: `{ id, event, deviceId, timestamp, data }`. */
export function envelopeSchema(kind: string, data: TSchema): TSchema {
  return Type.Object(
    {
      id: Type.String({
        description: "The event's id: the same on every attempt (the `webhook-id` header); deduplicate on it.",
      }),
      event: Type.Literal(kind),
      deviceId: Type.String(),
      timestamp: Type.String({ format: 'date-time', description: 'When it happened.' }),
      data,
    },
    closed,
  );
}

// The schemas and the domain's types say the same, in both directions (a compile-time check).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const agree = <T extends true>(): T | undefined => undefined;
agree<Same<Static<typeof MessageReceivedPayload>, Omit<MessageReceivedData, 'secret'>>>();
agree<Same<Static<typeof MessageStatusPayload>, MessageStatusChangedData>>();
agree<Same<Static<typeof SessionStatePayload>, SessionStateChangedData>>();
agree<Same<Static<typeof MessageEditedPayload>, MessageEditedData>>();
agree<Same<Static<typeof MessageRevokedPayload>, MessageRevokedData>>();
agree<Same<Static<typeof PollVotePayload>, PollVoteReceivedData>>();
agree<Same<Static<typeof PresenceUpdatePayload>, PresenceUpdatedData>>();
agree<Same<Static<typeof CallReceivedPayload>, CallReceivedData>>();
agree<Same<Static<typeof GroupUpdatedPayload>, GroupUpdatedData>>();
agree<Same<Static<typeof GroupParticipantsPayload>, GroupParticipantsChangedData>>();
agree<Same<Static<typeof ChatUpdatedPayload>, ChatUpdatedData>>();
agree<Same<Static<typeof ChatDeletedPayload>, ChatDeletedData>>();
agree<Same<Static<typeof MessageDeletedPayload>, MessageDeletedData>>();
agree<Same<Static<typeof HistorySyncedPayload>, HistorySyncedData>>();
agree<Same<Static<typeof LabelUpdatedPayload>, LabelUpdatedData>>();
agree<Same<Static<typeof ChatLabelsPayload>, ChatLabelChangedData>>();
agree<Same<Static<typeof GroupJoinRequestPayload>, GroupJoinRequestData>>();
