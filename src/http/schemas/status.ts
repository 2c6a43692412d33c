import Type from 'typebox';
import { PhoneNumber, WaMessageId } from './send.js';
import { DeviceId } from './common.js';
import { MIMETYPE_PATTERN } from '../../media/media-type.js';

/** Numbers in an audience: a status for a large address book is one request. */
export const AUDIENCE_MAX = 10_000;

const Audience = Type.Array(PhoneNumber, {
  maxItems: AUDIENCE_MAX,
  description:
    'The numbers that see the status. Default: every number the account has exchanged messages with. Empty: `422 empty_audience`.',
});

const MediaUrl = Type.String({ format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', maxLength: 4096 });

export const StatusTextBody = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 700 }),
    backgroundColor: Type.Optional(Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', description: '`#RRGGBB`.' })),
    font: Type.Optional(Type.Integer({ minimum: 0, maximum: 9 })),
    audience: Type.Optional(Audience),
  },
  { additionalProperties: false, examples: [{ text: 'Open on Sunday!', backgroundColor: '#25D366', font: 1 }] },
);

export const StatusMediaBody = Type.Object(
  {
    url: Type.Optional(MediaUrl),
    base64: Type.Optional(Type.String({ minLength: 1 })),
    mimetype: Type.Optional(Type.String({ pattern: MIMETYPE_PATTERN, maxLength: 255 })),
    caption: Type.Optional(Type.String({ maxLength: 65_536 })),
    audience: Type.Optional(Audience),
  },
  {
    additionalProperties: false,
    description: 'Exactly one of `url`, `base64` or (multipart/form-data) a `file` part.',
  },
);

export const StatusPostedSchema = Type.Object({
  waMessageId: Type.String(),
  status: Type.Literal('queued'),
  outboxId: Type.String(),
});

export const StatusListSchema = Type.Object({
  items: Type.Array(
    Type.Object({
      waMessageId: Type.String(),
      type: Type.String({ description: '`text`, `image` or `video`.' }),
      text: Type.Optional(Type.String({ description: 'The text, or the caption.' })),
      timestamp: Type.String({ format: 'date-time', description: 'When it was posted.' }),
      viewers: Type.Array(Type.Object({ number: Type.String(), at: Type.String({ format: 'date-time' }) })),
    }),
  ),
});

export const StatusParams = Type.Object({ deviceId: DeviceId, waMessageId: WaMessageId });
