import Type from 'typebox';
import { Cursor, DeviceId, Limit, numberField } from './common.js';

const ContactNumber = numberField('phone', '^[0-9]{7,15}$', 'A phone number.');
const StoredNumber = Type.String({ pattern: '^[0-9]+$', description: 'Digits only, with the country code.' });
const Jid = Type.String({
  minLength: 1,
  description: 'The WhatsApp address of the number (`<number>@s.whatsapp.net`).',
});

export const ContactParams = Type.Object({ deviceId: DeviceId, number: ContactNumber });

const LidPattern = '[0-9]{1,32}@lid';
export const IdentityParams = Type.Object({
  deviceId: DeviceId,
  id: Type.String({
    pattern: `^([0-9]{5,20}|${LidPattern})$`,
    description: 'A number (digits with the country code) or a LID (`<digits>@lid`).',
  }),
});

export const IdentitySchema = Type.Object({
  number: Type.Union([StoredNumber, Type.Null()], { description: 'The number of the contact; null when not known.' }),
  lid: Type.Union([Type.String({ pattern: `^${LidPattern}$` }), Type.Null()], {
    description: "The contact's LID (WhatsApp's privacy id, `<digits>@lid`); null when not known.",
  }),
});

export const ListContactsQuery = Type.Object(
  {
    limit: Type.Optional(Limit(500, 50)),
    cursor: Type.Optional(Cursor),
    q: Type.Optional(
      Type.String({
        maxLength: 100,
        description:
          'Empty: every contact. Search: part of a number (spaces, `+`, `-` and brackets are ignored) or of a name or push name (case and accents are ignored).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ContactSchema = Type.Object({
  number: StoredNumber,
  jid: Jid,
  name: Type.Optional(
    Type.String({ description: "The name in the account's address book (or a business's verified name)." }),
  ),
  pushName: Type.Optional(Type.String({ description: 'The name the person gave themselves.' })),
});

export const ContactListSchema = Type.Object({
  items: Type.Array(ContactSchema),
  nextCursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as `cursor` for the next page; null on the last page.',
  }),
});

export const NumberCheckSchema = Type.Object({
  number: ContactNumber,
  exists: Type.Boolean({ description: 'Whether the number has an account on the network.' }),
  jid: Type.Optional(Jid),
});

export const AvatarSchema = Type.Object({
  number: ContactNumber,
  url: Type.Union([Type.String({ minLength: 1 }), Type.Null()], {
    description: 'The profile picture, or null when there is none (or it is not visible to this account).',
  }),
});

export const AboutSchema = Type.Object({
  number: ContactNumber,
  about: Type.Union([Type.String(), Type.Null()], {
    description: 'The about text, or null when there is none (or it is not visible to this account).',
  }),
});

export const BlockedSchema = Type.Object({ blocked: Type.Boolean() });
export const BlockedListSchema = Type.Object({
  items: Type.Array(ContactNumber, { description: 'The numbers the account blocks.' }),
});

export const ProfileSchema = Type.Object({
  phone: Type.String({ pattern: '^[0-9]{5,20}$', description: "The account's number." }),
  name: Type.Optional(Type.String({ description: 'The name the account shows (its push name).' })),
  about: Type.Optional(
    Type.Union([Type.String(), Type.Null()], { description: "The account's about text; null when it has none." }),
  ),
  avatarUrl: Type.Optional(
    Type.Union([Type.String(), Type.Null()], { description: "The account's profile picture, or null." }),
  ),
});

export const PatchProfileBody = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 25,
        description: 'The name the account shows (WhatsApp allows 25 characters).',
      }),
    ),
    about: Type.Optional(
      Type.String({ maxLength: 139, description: 'The about text (WhatsApp allows 139 characters; `""` clears it).' }),
    ),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ name: 'Shop Support', about: 'Mon–Fri 9–17' }] },
);

/** A contact's presence (GET /devices/:id/contacts/:number/presence). */
export const PresenceSchema = Type.Object({
  state: Type.Enum(['available', 'unavailable', 'unknown'], {
    description: '`unknown`: no presence of this contact was seen yet.',
  }),
  lastSeen: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the contact was last seen online, when known.',
  }),
});
export const SubscribedSchema = Type.Object({ number: Type.String(), subscribed: Type.Literal(true) });
