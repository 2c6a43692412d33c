import Type from 'typebox';
import { MIMETYPE_PATTERN } from '../../media/media-type.js';
import { SEND_KINDS } from '../../outbox/stream/outbox-events.js';
import { CHAT_ID_PATTERN, LID_PATTERN, PHONE_PATTERN } from '../../messages/chat-id.js';
import { CHANNEL_ID_PATTERN } from '../../channels/channel-id.js';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from '../../outbox/commands/idempotency-keys.js';
import { DeviceId, SessionState, Timestamp, numberField } from './common.js';

export const TEXT_MAX_LENGTH = 65_536;

export const PhoneNumber = numberField('phone', '^[0-9]{7,15}$', 'A phone number.');
export const ChatId = numberField(
  'chat',
  CHAT_ID_PATTERN,
  'A chat: a number, a group id (`120363…@g.us`) or `<digits>@lid`.',
  { maxLength: 64 },
);
const To = numberField(
  'chat',
  CHAT_ID_PATTERN,
  'The recipient: a number, a group id (`120363…@g.us`) or `<digits>@lid`.',
  { maxLength: 64 },
);
/** Text, image and video also go to a channel the account owns or administers (else `403 not_channel_admin`). */
const ToOrChannel = numberField(
  'chat',
  `${CHAT_ID_PATTERN}|(${CHANNEL_ID_PATTERN})`,
  'The recipient: a number, a group id (`120363…@g.us`), `<digits>@lid`, or a channel (`<digits>@newsletter`) the account owns or administers.',
  { maxLength: 64 },
);
const HttpUrl = Type.String({ format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', maxLength: 4096 });
export const MediaUrl = Type.String({
  format: 'uri',
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
  maxLength: 4096,
  description:
    'An http(s) URL the media is fetched from when the message is sent (through the outbound network guard).',
});
const Base64 = Type.String({
  minLength: 1,
  description: 'The media as base64 (a `data:<type>;base64,` prefix is accepted).',
});
const Mimetype = Type.String({
  pattern: MIMETYPE_PATTERN,
  maxLength: 255,
  description: 'The media type; detected from the bytes when left out.',
});
const Caption = Type.String({ maxLength: TEXT_MAX_LENGTH, description: 'Text shown with the media (`""`: none).' });
export const WaMessageId = Type.String({ pattern: '^[A-Za-z0-9._:-]{1,128}$', description: 'A WhatsApp message id.' });

const MEDIA_NOTE = 'Exactly one of `url`, `base64` or (multipart/form-data) a `file` part.';

export const MENTIONS_MAX = 256;

/** What every send accepts: the message it quotes and the numbers it mentions. */
const Context = {
  replyTo: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9._:-]{1,128}$',
      description:
        'The waMessageId of a message of the same chat the gateway has seen (sent or received): the new message quotes it. Unknown: `404 message_not_found`.',
    }),
  ),
  mentions: Type.Optional(
    Type.Union(
      [
        Type.Array(numberField('phone_or_lid', `(${PHONE_PATTERN})|(${LID_PATTERN})`, 'A number or `<digits>@lid`.'), {
          maxItems: MENTIONS_MAX,
          uniqueItems: true,
          description: 'Numbers mentioned in the text or caption (which writes them `@<number>`).',
        }),
        Type.Literal('all', {
          description:
            'Every participant of the group (`to` must be a group): the participants the gateway knows when the send is accepted.',
        }),
      ],
      { description: 'Numbers mentioned in the text or caption, or `"all"` in a group.' },
    ),
  ),
  expiresAt: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'Not sent by then (still queued), the message is `expired` instead of going out late. Default: now + OUTBOX_MESSAGE_TTL, if that is set.',
    }),
  ),
};

export const TextBody = Type.Object(
  { to: ToOrChannel, text: Type.String({ minLength: 1, maxLength: TEXT_MAX_LENGTH }), ...Context },
  { additionalProperties: false },
);

export const ImageOrVideoBody = Type.Object(
  {
    to: ToOrChannel,
    url: Type.Optional(MediaUrl),
    base64: Type.Optional(Base64),
    mimetype: Type.Optional(Mimetype),
    caption: Type.Optional(Caption),
    ...Context,
  },
  { additionalProperties: false, description: MEDIA_NOTE },
);

export const AudioBody = Type.Object(
  {
    to: To,
    url: Type.Optional(MediaUrl),
    base64: Type.Optional(Base64),
    mimetype: Type.Optional(Mimetype),
    ptt: Type.Optional(Type.Boolean({ description: 'Send as a voice note.' })),
    ...Context,
  },
  { additionalProperties: false, description: MEDIA_NOTE },
);

export const FileBody = Type.Object(
  {
    to: To,
    url: Type.Optional(MediaUrl),
    base64: Type.Optional(Base64),
    filename: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'Shown to the recipient. Required, except with a multipart `file` part that has a file name.',
      }),
    ),
    mimetype: Type.Optional(Mimetype),
    caption: Type.Optional(Caption),
    ...Context,
  },
  { additionalProperties: false, description: MEDIA_NOTE },
);

export const LocationBody = Type.Object(
  {
    to: To,
    latitude: Type.Number({ minimum: -90, maximum: 90 }),
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
    name: Type.Optional(Type.String({ maxLength: 1024, description: '`""`: none.' })),
    address: Type.Optional(Type.String({ maxLength: 1024, description: '`""`: none.' })),
    ...Context,
  },
  { additionalProperties: false },
);

export const LinkBody = Type.Object(
  {
    to: To,
    url: HttpUrl,
    text: Type.Optional(
      Type.String({
        maxLength: TEXT_MAX_LENGTH,
        description: 'The url is appended when the text does not contain it.',
      }),
    ),
    preview: Type.Optional(
      Type.Boolean({
        description: "Show a preview built from the page's Open Graph data (sent without one if it cannot be had).",
      }),
    ),
    ...Context,
  },
  { additionalProperties: false },
);

export const ReactionBody = Type.Object(
  {
    to: To,
    messageId: WaMessageId,
    emoji: Type.String({ maxLength: 64, description: 'One emoji; `""` removes the reaction.' }),
    ...Context,
  },
  { additionalProperties: false },
);

export const StickerBody = Type.Object(
  {
    to: To,
    url: Type.Optional(MediaUrl),
    base64: Type.Optional(Base64),
    mimetype: Type.Optional(Mimetype),
    ...Context,
  },
  { additionalProperties: false, description: `${MEDIA_NOTE} WebP only (static or animated), at most 1 MiB.` },
);

export const ContactCardSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    phone: Type.String({
      pattern: '^\\+?[0-9][0-9 ()-]{4,30}$',
      description: 'The number, with the country code; spaces, dashes and parentheses are allowed.',
    }),
    organization: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    email: Type.Optional(Type.String({ minLength: 3, maxLength: 256 })),
  },
  {
    additionalProperties: false,
    description: 'Sent as a vCard; every field is escaped (a newline cannot add a line to the card).',
  },
);

export const ContactBody = Type.Object(
  { to: To, contacts: Type.Array(ContactCardSchema, { minItems: 1, maxItems: 10 }), ...Context },
  { additionalProperties: false },
);

export const POLL_OPTIONS_MAX = 12;

export const PollBody = Type.Object(
  {
    to: To,
    question: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' }),
    options: Type.Array(Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }), {
      minItems: 2,
      maxItems: POLL_OPTIONS_MAX,
      uniqueItems: true,
      description: '2 to 12 distinct options.',
    }),
    multipleAnswers: Type.Optional(
      Type.Boolean({ description: 'Voters may choose several options (default false: one).' }),
    ),
    ...Context,
  },
  { additionalProperties: false },
);

export const ForwardBody = Type.Object(
  { to: To, messageId: WaMessageId, ...Context },
  {
    additionalProperties: false,
    description: '`messageId`: a message the gateway has seen, with text or media, forwarded as it is.',
  },
);

export const EditBody = Type.Object(
  { text: Type.String({ minLength: 1, maxLength: TEXT_MAX_LENGTH }) },
  { additionalProperties: false },
);

export const EditSchema = Type.Object({
  status: Type.Enum(['edited', 'editing'], {
    description:
      '`edited`: the message was still queued and goes out with the new text. `editing`: the edit of a sent message is queued in the outbox.',
  }),
});

export const ChatParams = Type.Object({ deviceId: DeviceId, chatId: ChatId });

export const ReadBody = Type.Object(
  {
    messageIds: Type.Optional(
      Type.Array(WaMessageId, {
        minItems: 1,
        maxItems: 1000,
        uniqueItems: true,
        description: 'Received messages of the chat; left out: every unread one.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ReadSchema = Type.Object({
  read: Type.Integer({ minimum: 0, description: 'How many messages were marked read.' }),
});

export const ChatPresenceBody = Type.Object(
  { state: Type.Enum(['typing', 'recording', 'paused']) },
  { additionalProperties: false },
);
export const PresenceBody = Type.Object(
  { state: Type.Enum(['available', 'unavailable']) },
  { additionalProperties: false },
);
export const PresenceSchema = Type.Object({ state: Type.String() });

export const QueuedSchema = Type.Object({
  outboxId: Type.String(),
  waMessageId: Type.String({ description: 'Assigned now, in the format WhatsApp clients use; it never changes.' }),
  status: Type.Literal('queued'),
  kind: Type.Enum(SEND_KINDS),
  to: Type.String(),
  createdAt: Timestamp,
  expiresAt: Type.Optional(
    Type.String({
      format: 'date-time',
      description: "Not sent by then, the message is `expired` (the send's `expiresAt`, or OUTBOX_MESSAGE_TTL).",
    }),
  ),
  sessionState: Type.Optional(SessionState),
});

export const MessageParams = Type.Object({ deviceId: DeviceId, waMessageId: WaMessageId });

export const DeleteMessageSchema = Type.Object({
  status: Type.Enum(['cancelled', 'deleting', 'deleted'], {
    description:
      '`cancelled`: removed from the outbox, never sent. `deleting`: being revoked for everyone (later status `deleted`). `deleted`: already revoked.',
  }),
});

/** Declared for /openapi.json; the handlers read and check it with parseIdempotencyKey (routes/send.ts, idempotencyKeyOf). */
export const IdempotencyHeaders = Type.Object({
  'Idempotency-Key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
      description: 'Makes a retried request answer with the first answer instead of queuing again (24 h).',
    }),
  ),
});
