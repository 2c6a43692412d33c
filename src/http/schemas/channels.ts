import Type from 'typebox';
import { CHANNEL_ROLES } from '../../channels/channel-events.js';
import { CHANNEL_ID_PATTERN } from '../../channels/channel-id.js';
import { Cursor, DeviceId, Limit } from './common.js';
import { WaMessageId } from './send.js';

export const ChannelId = Type.String({
  pattern: CHANNEL_ID_PATTERN,
  maxLength: 64,
  description: 'A channel (newsletter) id as WhatsApp writes it (`120363…@newsletter`).',
});

export const ChannelParams = Type.Object({ deviceId: DeviceId, channelId: ChannelId });

export const ChannelPostParams = Type.Object({ deviceId: DeviceId, channelId: ChannelId, waMessageId: WaMessageId });

const Emoji = Type.String({ maxLength: 64, description: 'One emoji; `""` takes the reaction back.' });

export const ChannelReactionBody = Type.Object(
  { emoji: Emoji },
  { additionalProperties: false, examples: [{ emoji: '👍' }] },
);

export const ChannelReactionSchema = Type.Object({ channelId: ChannelId, waMessageId: WaMessageId, emoji: Emoji });

const Name = Type.String({ minLength: 1, maxLength: 100, description: "The channel's name." });
const Description = Type.String({ maxLength: 2048, description: 'The channel\'s description (`""` removes it).' });

export const ChannelSchema = Type.Object({
  channelId: ChannelId,
  name: Type.String(),
  description: Type.Optional(Type.String()),
  role: Type.Optional(
    Type.Enum(CHANNEL_ROLES, {
      description: "The account's role: `owner`, `admin` or `subscriber` (a follower); absent: it does not follow it.",
    }),
  ),
  subscribers: Type.Optional(Type.Integer({ minimum: 0, description: 'How many follow it, when the network says.' })),
  muted: Type.Boolean({ description: 'The account muted it.' }),
  inviteLink: Type.Optional(Type.String({ description: '`https://whatsapp.com/channel/<code>`, when known.' })),
});

export const ChannelIdSchema = Type.Object({ channelId: ChannelId });

export const ChannelListSchema = Type.Object({ items: Type.Array(ChannelSchema) });

export const CreateChannelBody = Type.Object(
  { name: Name, description: Type.Optional(Description) },
  { additionalProperties: false },
);

export const PatchChannelBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    muted: Type.Optional(Type.Boolean({ description: "The account's own mute (any follower)." })),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ name: 'Shop news', muted: false }] },
);

export const ResolveChannelBody = Type.Object(
  {
    link: Type.String({
      minLength: 1,
      maxLength: 512,
      description: "The channel's link (`https://whatsapp.com/channel/<code>`) or its code.",
    }),
  },
  { additionalProperties: false },
);

export const ChannelMessagesQuery = Type.Object(
  { limit: Type.Optional(Limit(100, 20)), cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);

export const ChannelMessagePageSchema = Type.Object({
  items: Type.Array(
    Type.Object({
      waMessageId: Type.String(),
      type: Type.String({ description: '`text`, `image`, `video`, …' }),
      body: Type.Optional(Type.String({ description: 'The text, or the caption.' })),
      timestamp: Type.Integer({ description: 'Unix seconds.' }),
      reactions: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
        description: 'How many reacted with each emoji.',
      }),
    }),
  ),
  nextCursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as `cursor` for the next (older) page; null on the last page.',
  }),
});
