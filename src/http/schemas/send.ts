import Type from 'typebox';
import { MIMETYPE_PATTERN } from '../../media/media-type.js';
import { SEND_KINDS } from '../../outbox/outbox-events.js';
import { DeviceId, Timestamp } from './common.js';

export const TEXT_MAX_LENGTH = 65_536;

export const PhoneNumber = Type.String({ pattern: '^[0-9]{7,15}$', description: 'Digits only, with the country code.' });
const To = Type.String({ pattern: '^[0-9]{7,15}$', description: 'The recipient: digits only, with the country code (e.g. 4915112345678).' });
const HttpUrl = Type.String({ format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', maxLength: 4096 });
const MediaUrl = Type.String({
  format: 'uri',
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
  maxLength: 4096,
  description: 'An http(s) URL the media is fetched from when the message is sent (through the outbound network guard).',
});
const Base64 = Type.String({ minLength: 1, description: 'The media as base64 (a `data:<type>;base64,` prefix is accepted).' });
const Mimetype = Type.String({ pattern: MIMETYPE_PATTERN, maxLength: 255, description: 'The media type; detected from the bytes when left out.' });
const Caption = Type.String({ minLength: 1, maxLength: TEXT_MAX_LENGTH, description: 'Text shown with the media.' });
export const WaMessageId = Type.String({ pattern: '^[A-Za-z0-9._:-]{1,128}$', description: 'A WhatsApp message id.' });

const MEDIA_NOTE = 'Exactly one of `url`, `base64` or (multipart/form-data) a `file` part.';

export const TextBody = Type.Object({ to: To, text: Type.String({ minLength: 1, maxLength: TEXT_MAX_LENGTH }) }, { additionalProperties: false });

export const ImageOrVideoBody = Type.Object(
  { to: To, url: Type.Optional(MediaUrl), base64: Type.Optional(Base64), mimetype: Type.Optional(Mimetype), caption: Type.Optional(Caption) },
  { additionalProperties: false, description: MEDIA_NOTE },
);

export const AudioBody = Type.Object(
  {
    to: To,
    url: Type.Optional(MediaUrl),
    base64: Type.Optional(Base64),
    mimetype: Type.Optional(Mimetype),
    ptt: Type.Optional(Type.Boolean({ description: 'Send as a voice note.' })),
  },
  { additionalProperties: false, description: MEDIA_NOTE },
);

export const FileBody = Type.Object(
  {
    to: To,
    url: Type.Optional(MediaUrl),
    base64: Type.Optional(Base64),
    filename: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'Shown to the recipient. Required, except with a multipart `file` part that has a file name.' }),
    ),
    mimetype: Type.Optional(Mimetype),
    caption: Type.Optional(Caption),
  },
  { additionalProperties: false, description: MEDIA_NOTE },
);

export const LocationBody = Type.Object(
  {
    to: To,
    latitude: Type.Number({ minimum: -90, maximum: 90 }),
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    address: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  },
  { additionalProperties: false },
);

export const LinkBody = Type.Object(
  {
    to: To,
    url: HttpUrl,
    text: Type.Optional(Type.String({ maxLength: TEXT_MAX_LENGTH, description: 'The url is appended when the text does not contain it.' })),
    preview: Type.Optional(Type.Boolean({ description: 'Show a preview built from the page\'s Open Graph data (sent without one if it cannot be had).' })),
  },
  { additionalProperties: false },
);

export const ReactionBody = Type.Object(
  {
    to: To,
    messageId: WaMessageId,
    emoji: Type.String({ maxLength: 64, description: 'One emoji; `""` removes the reaction.' }),
  },
  { additionalProperties: false },
);

export const QueuedSchema = Type.Object({
  outboxId: Type.String(),
  waMessageId: Type.String({ description: 'Assigned now, in the format WhatsApp clients use; it never changes.' }),
  status: Type.Literal('queued'),
  kind: Type.Enum(SEND_KINDS),
  to: Type.String(),
  createdAt: Timestamp,
});

export const MessageParams = Type.Object({ deviceId: DeviceId, waMessageId: WaMessageId });

export const DeleteMessageSchema = Type.Object({
  status: Type.Enum(['cancelled', 'deleting', 'deleted'], {
    description: '`cancelled`: removed from the outbox, never sent. `deleting`: being revoked for everyone (later status `deleted`). `deleted`: already revoked.',
  }),
});
