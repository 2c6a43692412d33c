import Type from 'typebox';
import { INBOUND_TYPES, MESSAGE_STATUSES } from '../../messages/message-events.js';
import { Cursor, DeviceId, Limit, Timestamp } from './common.js';
import { ChatId, WaMessageId } from './send.js';

/** Declared for /openapi.json; the handlers compare it with their answer's ETag (src/http/conditional.ts). */
export const ConditionalHeaders = Type.Object({
  'If-None-Match': Type.Optional(
    Type.String({
      description:
        'The `ETag` of an earlier answer of this URL: `304` with no body while nothing it shows has changed (polling for what is new costs no query).',
    }),
  ),
});

export const PageQuery = Type.Object(
  { limit: Type.Optional(Limit(200, 50)), cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);

export const LabelId = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9_.:-]+$',
  description: 'A label id (WhatsApp Business).',
});

export const ChatListQuery = Type.Object(
  {
    limit: Type.Optional(Limit(200, 50)),
    cursor: Type.Optional(Cursor),
    archived: Type.Optional(Type.Boolean({ description: 'Only archived chats (true) or only others (false).' })),
    pinned: Type.Optional(Type.Boolean({ description: 'Only pinned chats (true) or only others (false).' })),
    unread: Type.Optional(
      Type.Boolean({ description: 'Only chats with unread messages or marked unread (true), or only others (false).' }),
    ),
    label: Type.Optional(LabelId),
  },
  { additionalProperties: false },
);

export const SearchQuery = Type.Object(
  {
    q: Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'Words the message must contain, in any order (case and accents do not matter; a word matches words it starts).',
    }),
    chatId: Type.Optional(ChatId),
    limit: Type.Optional(Limit(200, 50)),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);

export const ChatPatchBody = Type.Object(
  {
    archived: Type.Optional(Type.Boolean()),
    pinned: Type.Optional(Type.Boolean({ description: "Pinned to the top of the phone's chat list." })),
    muted: Type.Optional(
      Type.Union([Type.Boolean(), Type.String({ format: 'date-time' })], {
        description: 'false: unmuted; true: muted for ever; an ISO 8601 time in the future: muted until then.',
      }),
    ),
    unread: Type.Optional(Type.Boolean({ description: 'Mark the chat unread (true) or read (false) as a whole.' })),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ archived: true }] },
);

export const PinBody = Type.Object(
  { duration: Type.Enum(['24h', '7d', '30d'], { description: 'How long the message stays pinned in its chat.' }) },
  { additionalProperties: false },
);

export const DeleteForMeQuery = Type.Object(
  { for: Type.Literal('me', { description: 'Deleted for this account only (the only choice here).' }) },
  { additionalProperties: false },
);

export const HistoryFetchBody = Type.Object(
  {
    count: Type.Integer({
      minimum: 1,
      maximum: 500,
      description: 'How many older messages to ask for (WhatsApp may send fewer: about 50 a request).',
    }),
  },
  { additionalProperties: false, examples: [{ count: 50 }] },
);

export const HistoryRequestedSchema = Type.Object({
  chatId: ChatId,
  count: Type.Integer(),
  before: Type.Object(
    {
      waMessageId: Type.String(),
      timestamp: Type.Integer({ description: 'Unix seconds.' }),
    },
    { description: 'The oldest message the gateway held for the chat: the history asked for is older.' },
  ),
});

export const DoneSchema = Type.Object({ ok: Type.Literal(true) });

export const ChatDeletedSchema = Type.Object({ chatId: Type.String(), cleared: Type.Boolean() });

export const StarSchema = Type.Object({ waMessageId: Type.String(), starred: Type.Boolean() });

export const PinSchema = Type.Object({
  waMessageId: Type.String(),
  pinnedUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export const ChatMessagesParams = Type.Object({ deviceId: DeviceId, chatId: ChatId });

const MessageType = Type.Enum(INBOUND_TYPES, {
  description: 'The message kind (`link` and `forward` show as what they carry).',
});
const UnixSeconds = Type.Integer({
  description: 'Unix seconds: when the message was sent (received ones) or queued (outgoing ones).',
});
const NextCursor = Type.Union([Type.String(), Type.Null()], {
  description: 'Pass as `cursor` for the next page; null on the last page.',
});

export const ChatSchema = Type.Object({
  chatId: ChatId,
  isGroup: Type.Boolean(),
  name: Type.Optional(
    Type.String({ description: 'The push name the other person last gave with a message (not for groups).' }),
  ),
  unreadCount: Type.Integer({
    minimum: 0,
    description: 'Received messages not yet marked read by this device (POST /chats/:chatId/read).',
  }),
  lastMessage: Type.Optional(
    Type.Object(
      {
        waMessageId: WaMessageId,
        fromMe: Type.Boolean(),
        type: MessageType,
        body: Type.String(),
        timestamp: UnixSeconds,
      },
      { description: 'Absent while the chat is cleared (no message came since).' },
    ),
  ),
  updatedAt: Type.String({ format: 'date-time', description: 'ISO 8601: the time of the last message.' }),
  archived: Type.Boolean(),
  pinned: Type.Boolean(),
  mutedUntil: Type.Union([Type.String(), Type.Null()], {
    description: 'null (not muted), an ISO 8601 time or "forever".',
  }),
  unread: Type.Boolean({ description: 'It has unread messages, or was marked unread as a whole.' }),
  labels: Type.Array(Type.String(), { description: 'Label ids (WhatsApp Business accounts).' }),
});

export const ChatListSchema = Type.Object({ items: Type.Array(ChatSchema), nextCursor: NextCursor });

const Reaction = Type.Object({
  from: Type.String({
    description: 'Who reacted (number or `@lid` id); "" for this account when its number is unknown.',
  }),
  fromMe: Type.Boolean({ description: "The reaction is this account's own." }),
  emoji: Type.String(),
});

const messageViewProperties = {
  waMessageId: WaMessageId,
  chatId: Type.Union([ChatId, Type.Literal('status@broadcast')], {
    description: 'The chat; `status@broadcast` for a status (posted or received), which is no chat of its own.',
  }),
  from: Type.String({
    description:
      'The sender (number or `@lid` id; the participant in a group); this account\'s number for its own messages, "" when unknown.',
  }),
  fromMe: Type.Boolean(),
  participant: Type.Optional(Type.String({ description: 'The sender inside a group.' })),
  type: MessageType,
  body: Type.String({ description: 'Text or caption, as last edited; "" once revoked.' }),
  timestamp: UnixSeconds,
  status: Type.Optional(
    Type.Enum(MESSAGE_STATUSES, { description: 'Outgoing messages sent through this gateway: the latest status.' }),
  ),
  quoted: Type.Optional(
    Type.Object(
      {
        waMessageId: WaMessageId,
        from: Type.String(),
        fromMe: Type.Optional(Type.Boolean()),
        type: Type.String(),
        body: Type.String(),
      },
      { description: 'The message it replies to, as the gateway saw it then.' },
    ),
  ),
  media: Type.Optional(
    Type.Object(
      {
        mimetype: Type.Optional(Type.String()),
        size: Type.Optional(Type.Integer({ minimum: 0 })),
        filename: Type.Optional(Type.String()),
        url: Type.Optional(
          Type.String({
            description:
              'Where the bytes are served (GET /messages/:waMessageId/media) while kept: received media once downloaded, sent ones once `sent`.',
          }),
        ),
        sha256: Type.Optional(Type.String()),
        status: Type.Optional(Type.Enum(['pending', 'ready', 'failed'])),
      },
      {
        description:
          'A media reference: received media as recorded; for sent media their type, size and name, and `url` once sent (media given by `url` are not kept: no `url`).',
      },
    ),
  ),
  reactions: Type.Array(Reaction, { description: 'The latest reaction of each sender.' }),
  edited: Type.Boolean(),
  revoked: Type.Boolean({ description: 'Deleted for everyone (by the sender, or by DELETE /send/:waMessageId).' }),
  starred: Type.Boolean(),
  pinnedUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'Pinned in its chat until then; null when not pinned.',
  }),
  historical: Type.Boolean({
    description: 'Imported from the history WhatsApp sent when the device linked (or asked for), not seen live.',
  }),
};

export const MessageViewSchema = Type.Object(messageViewProperties);

export const MessagePageSchema = Type.Object({ items: Type.Array(MessageViewSchema), nextCursor: NextCursor });

export const StatusEntrySchema = Type.Object({
  status: Type.Enum([...MESSAGE_STATUSES, 'edited']),
  at: Timestamp,
  error: Type.Optional(
    Type.Object({ code: Type.String(), message: Type.String() }, { description: 'Why it failed (`failed`).' }),
  ),
});

export const MessageDetailSchema = Type.Object({
  ...messageViewProperties,
  outboxId: Type.Optional(Type.String({ description: 'Outgoing messages sent through this gateway.' })),
  statusHistory: Type.Optional(
    Type.Array(StatusEntrySchema, {
      description:
        'Outgoing messages sent through this gateway: every status in the order it was recorded, from `queued` (receipts may repeat or come late; `status` is the one that counts), and each edit.',
    }),
  ),
  deferredUntil: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        "A queued send that pacing holds (the day's cap, quiet hours): it stays queued and goes from then on, in order.",
    }),
  ),
});
