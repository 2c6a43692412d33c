import { CHANNEL_ID_PATTERN } from '../../channels/channel-id.js';
import Type from 'typebox';
import { INBOUND_TYPES, PRESENCE_STATES } from '../../messages/message-events.js';
import { numberField } from './common.js';
import { ChatId, ContactCardSchema, WaMessageId } from './send.js';

const PhoneNumber = (description: string) =>
  numberField('phone', '^[0-9]{7,15}$', `${description} Numbers ending in 0000 do not exist in the sandbox.`);

export const ScanBody = Type.Object(
  {
    phone: PhoneNumber("The phone that scans the code: it becomes the account's number."),
    business: Type.Optional(
      Type.Boolean({ default: false, description: 'A WhatsApp Business phone: the account has labels.' }),
    ),
  },
  { additionalProperties: false },
);

export const SANDBOX_INBOUND_TYPES = [...INBOUND_TYPES, 'edit', 'revoke', 'poll_vote'] as const;

export const InboundBody = Type.Object(
  {
    from: PhoneNumber('The sender (in a group: the participant).'),
    chatId: Type.Optional(ChatId),
    type: Type.Optional(
      Type.Enum(SANDBOX_INBOUND_TYPES, {
        description:
          'Any `message.received` type (default `text`), or `edit` (`messageId`, `body`), `revoke` (`messageId`), `poll_vote` (`pollMessageId`, `selectedOptions`).',
      }),
    ),
    body: Type.Optional(Type.String({ maxLength: 65_536, description: 'The text or caption (default "").' })),
    quotedMessageId: Type.Optional(WaMessageId),
    mentions: Type.Optional(Type.Array(PhoneNumber('A mentioned number.'), { maxItems: 256, uniqueItems: true })),
    media: Type.Optional(
      Type.Object(
        {
          // Optional in the schema only because the body parser takes it out of the JSON (it streams to disk);
          // the route answers 400 when it is missing.
          base64: Type.Optional(
            Type.String({ minLength: 1, description: 'Required: the media, base64 or a `data:` URL.' }),
          ),
          mimetype: Type.String({ minLength: 3, maxLength: 255 }),
          filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        },
        { additionalProperties: false },
      ),
    ),
    location: Type.Optional(
      Type.Object(
        {
          latitude: Type.Number({ minimum: -90, maximum: 90 }),
          longitude: Type.Number({ minimum: -180, maximum: 180 }),
          name: Type.Optional(Type.String({ maxLength: 1024 })),
          address: Type.Optional(Type.String({ maxLength: 1024 })),
        },
        { additionalProperties: false },
      ),
    ),
    contacts: Type.Optional(Type.Array(ContactCardSchema, { minItems: 1, maxItems: 10 })),
    poll: Type.Optional(
      Type.Object(
        {
          question: Type.String({ minLength: 1, maxLength: 255 }),
          options: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
            minItems: 2,
            maxItems: 12,
            uniqueItems: true,
          }),
          multipleAnswers: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    messageId: Type.Optional(WaMessageId),
    pollMessageId: Type.Optional(WaMessageId),
    selectedOptions: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 12, uniqueItems: true })),
  },
  { additionalProperties: false },
);

export const SandboxPresenceBody = Type.Object(
  { from: PhoneNumber('Whose presence.'), chatId: Type.Optional(ChatId), state: Type.Enum(PRESENCE_STATES) },
  { additionalProperties: false },
);

export const SandboxStatusViewBody = Type.Object(
  {
    from: PhoneNumber('Who views the status.'),
    waMessageId: Type.String({ pattern: '^[A-Za-z0-9._:-]{1,128}$', description: 'The status (its waMessageId).' }),
  },
  { additionalProperties: false },
);

export const SandboxChannelReactionBody = Type.Object(
  {
    channelId: Type.String({ pattern: CHANNEL_ID_PATTERN, description: 'A channel the device owns or administers.' }),
    waMessageId: Type.String({ pattern: '^[A-Za-z0-9._:-]{1,128}$', description: 'The post (its waMessageId).' }),
    from: PhoneNumber('Who reacts.'),
    emoji: Type.String({ maxLength: 16, description: 'The reaction (`""` takes it back).' }),
  },
  { additionalProperties: false },
);

export const SandboxCallBody = Type.Object(
  { from: PhoneNumber('The caller.'), isVideo: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export const SandboxCallSchema = Type.Object({ callId: Type.String() });
export const AcceptedSchema = Type.Object({ accepted: Type.Boolean() });

export const InboundAcceptedSchema = Type.Object({
  waMessageId: Type.String({
    description: 'The id the message arrives with (as `waMessageId` of `message.received`).',
  }),
});

export const SandboxGroupBody = Type.Object(
  {
    subject: Type.String({ minLength: 1, maxLength: 100 }),
    members: Type.Array(PhoneNumber('A member.'), { minItems: 1, maxItems: 256, uniqueItems: true }),
  },
  { additionalProperties: false },
);

export const SandboxGroupSchema = Type.Object({ groupId: Type.String({ pattern: '^120363[0-9]{12}@g\\.us$' }) });

export const SandboxPairBody = Type.Object(
  {
    code: Type.String({
      minLength: 8,
      maxLength: 16,
      description: 'The pairing code the device shows (`ABCD-EFGH`; case and the dash do not matter).',
    }),
  },
  { additionalProperties: false },
);

export const SandboxChatUpdateBody = Type.Object(
  {
    chatId: ChatId,
    archived: Type.Optional(Type.Boolean()),
    pinned: Type.Optional(Type.Boolean()),
    mutedUntil: Type.Optional(
      Type.Union([Type.Null(), Type.Literal('forever'), Type.String({ format: 'date-time' })], {
        description: 'null (unmuted), "forever" or an ISO 8601 time.',
      }),
    ),
    unread: Type.Optional(Type.Boolean()),
    deleted: Type.Optional(Type.Boolean({ description: 'The phone deleted the chat.' })),
    cleared: Type.Optional(Type.Boolean({ description: 'The phone emptied the chat.' })),
    deletedMessageIds: Type.Optional(
      Type.Array(WaMessageId, { maxItems: 100, description: 'Messages the phone deleted for this account.' }),
    ),
  },
  { additionalProperties: false },
);

const HISTORY_TYPES = INBOUND_TYPES.filter((t) => t !== 'reaction' && t !== 'poll');

export const SandboxHistoryBody = Type.Object(
  {
    chats: Type.Array(
      Type.Object(
        {
          chatId: ChatId,
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
          messages: Type.Array(
            Type.Object(
              {
                waMessageId: Type.Optional(WaMessageId),
                from: Type.Optional(PhoneNumber('The sender (default: the chat, for a direct chat).')),
                fromMe: Type.Optional(Type.Boolean()),
                type: Type.Optional(Type.Enum(HISTORY_TYPES, { description: 'Default `text`.' })),
                body: Type.String({ maxLength: 65_536 }),
                timestamp: Type.Integer({ minimum: 0, maximum: 99_999_999_999, description: 'Unix seconds.' }),
              },
              { additionalProperties: false },
            ),
            { maxItems: 10_000 },
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1_000 },
    ),
    final: Type.Optional(Type.Boolean({ description: 'The last chunk of this sync (default true).' })),
    progress: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  },
  { additionalProperties: false },
);

export const DeafenBody = Type.Object(
  { on: Type.Boolean({ description: 'true: deaf; false: hears again.' }) },
  { additionalProperties: false },
);
export const DeafenSchema = Type.Object({ deaf: Type.Boolean() });
