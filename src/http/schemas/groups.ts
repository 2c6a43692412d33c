import Type from 'typebox';
import { GROUP_ID_PATTERN, PHONE_PATTERN } from '../../messages/chat-id.js';
import { EPHEMERAL_DURATIONS, GROUP_ROLES, PARTICIPANT_ACTIONS } from '../../groups/group-events.js';
import { JOIN_REQUEST_ANSWERS, PARTICIPANT_STATUSES } from '../../groups/group-operations.js';
import { DeviceId } from './common.js';

export const GroupId = Type.String({
  pattern: GROUP_ID_PATTERN,
  maxLength: 64,
  description: 'A group id as WhatsApp writes it (`120363…@g.us`).',
});
const Number = Type.String({ pattern: PHONE_PATTERN, description: 'Digits only, with the country code.' });
const Member = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'A number (digits), or `<digits>@lid` when the network hides it.',
});
const Numbers = Type.Array(Number, { minItems: 1, maxItems: 256, uniqueItems: true });
const Subject = Type.String({ minLength: 1, maxLength: 100, description: "The group's name." });
const Description = Type.String({ maxLength: 2048, description: 'The group\'s description (`""` removes it).' });

export const GroupParams = Type.Object({ deviceId: DeviceId, groupId: GroupId });

const groupFields = {
  groupId: GroupId,
  subject: Type.String(),
  description: Type.Optional(Type.String()),
  size: Type.Integer({ minimum: 0, description: 'How many participants it has.' }),
  isAdmin: Type.Boolean({ description: 'Whether the account is an admin of it.' }),
  announce: Type.Boolean({ description: 'Only admins may send messages.' }),
  locked: Type.Boolean({ description: 'Only admins may change its settings.' }),
  ephemeral: Type.Integer({ minimum: 0, description: 'Disappearing messages: seconds a message lives (0: off).' }),
  joinApproval: Type.Boolean({ description: 'Joining by link needs an admin to approve the request.' }),
  membersCanAdd: Type.Boolean({ description: 'Every member may add participants (not only admins).' }),
};

const Ephemeral = Type.Union(
  EPHEMERAL_DURATIONS.map((seconds) => Type.Literal(seconds)),
  { description: 'Disappearing messages, in seconds: 0 (off), 86400 (24 h), 604800 (7 days) or 7776000 (90 days).' },
);

export const GroupSummarySchema = Type.Object(groupFields);
export const GroupListSchema = Type.Object({ items: Type.Array(GroupSummarySchema) });

const ParticipantSchema = Type.Object({
  number: Member,
  role: Type.Enum(GROUP_ROLES, { description: '`superadmin`: the creator.' }),
});
export const GroupSchema = Type.Object({ ...groupFields, participants: Type.Array(ParticipantSchema) });
export const CreatedGroupSchema = Type.Object({
  ...groupFields,
  participants: Type.Array(ParticipantSchema),
  failed: Type.Array(
    Type.Object({
      number: Number,
      reason: Type.String({ description: 'e.g. `not_found` (no account), `not_allowed` (privacy settings).' }),
    }),
  ),
});

export const CreateGroupBody = Type.Object(
  { subject: Subject, participants: Numbers },
  { additionalProperties: false },
);

export const PatchGroupBody = Type.Object(
  {
    subject: Type.Optional(Subject),
    description: Type.Optional(Description),
    announce: Type.Optional(Type.Boolean({ description: 'Only admins may send messages.' })),
    locked: Type.Optional(Type.Boolean({ description: 'Only admins may change the settings.' })),
    ephemeral: Type.Optional(Ephemeral),
    joinApproval: Type.Optional(Type.Boolean({ description: 'Joining by link needs an admin to approve.' })),
    membersCanAdd: Type.Optional(Type.Boolean({ description: 'Every member may add participants.' })),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ subject: 'Team Berlin', announce: true }] },
);

export const ParticipantsBody = Type.Object(
  { action: Type.Enum(PARTICIPANT_ACTIONS), participants: Numbers },
  { additionalProperties: false },
);

export const ParticipantResultsSchema = Type.Object({
  results: Type.Array(Type.Object({ number: Number, status: Type.Enum(PARTICIPANT_STATUSES) })),
});

export const InviteSchema = Type.Object({
  code: Type.String({ minLength: 1 }),
  url: Type.String({ description: '`https://chat.whatsapp.com/<code>`.' }),
});

export const JoinGroupBody = Type.Object(
  {
    code: Type.String({
      pattern: '^((https?://)?chat\\.whatsapp\\.com/)?[A-Za-z0-9_-]{6,64}$',
      description: 'An invite code, or a link `https://chat.whatsapp.com/<code>`.',
    }),
  },
  { additionalProperties: false },
);

export const GroupIdSchema = Type.Object({ groupId: GroupId });
export const JoinedSchema = Type.Object({
  groupId: GroupId,
  requested: Type.Optional(
    Type.Literal(true, {
      description: 'The group needs approval: a join request was made; an admin approves or rejects it.',
    }),
  ),
});

export const PictureBody = Type.Object(
  { base64: Type.Optional(Type.String({ minLength: 1, description: 'The JPEG or PNG image as base64.' })) },
  { additionalProperties: false, description: 'The image: `base64`, or (multipart/form-data) a `file` part.' },
);
export const PictureSchema = Type.Object({
  url: Type.Union([Type.String(), Type.Null()], { description: "The picture's URL; null when the group has none." }),
});

export const JoinRequestsSchema = Type.Object({
  items: Type.Array(
    Type.Object({
      number: Member,
      requestedAt: Type.String({ format: 'date-time' }),
    }),
  ),
});
export const JoinRequestsBody = Type.Object(
  {
    action: Type.Enum(JOIN_REQUEST_ANSWERS),
    participants: Type.Array(Member, { minItems: 1, maxItems: 256, uniqueItems: true }),
  },
  { additionalProperties: false },
);

/** The outcome of answering join requests, per number. */
export const JoinResultsSchema = Type.Object({
  results: Type.Array(
    Type.Object({
      number: Type.String(),
      status: Type.Enum(['ok', 'not_found', 'not_allowed'], {
        description: '`not_found`: no pending request of this number.',
      }),
    }),
  ),
});
