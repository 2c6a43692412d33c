import Type from 'typebox';
import { SCOPES } from '../../auth/scopes.js';
import { DeviceId, Timestamp } from './common.js';

export const ScopeSchema = Type.Enum(SCOPES, {
  description:
    '`read`: every GET, the streams and media downloads; `send`: sends, edits, deletes, the outbox, read receipts and presence; `manage`: the session, webhooks, settings, groups, profile, keys.',
});

const KeyId = Type.String({
  pattern: '^key_[0-9a-f-]{36}$',
  description: 'The key id (not the key).',
  examples: ['key_0b8e0c3a-5d0f-4f6e-9d7e-2f4b1c9a7e11'],
});
const Name = Type.String({ minLength: 1, maxLength: 100, description: 'A label for people (what the key is for).' });

export const KeyParams = Type.Object({ deviceId: DeviceId, keyId: Type.String({ minLength: 1, maxLength: 100 }) });

export const CreateKeyBody = Type.Object(
  {
    name: Name,
    scopes: Type.Array(ScopeSchema, { minItems: 1, maxItems: 3, uniqueItems: true }),
  },
  { additionalProperties: false },
);

const KeyFields = {
  keyId: KeyId,
  name: Name,
  scopes: Type.Array(ScopeSchema),
  createdAt: Timestamp,
};

export const CreatedKeySchema = Type.Object({
  ...KeyFields,
  key: Type.String({ pattern: '^dk_', description: 'The key. Shown only in this answer: store it now.' }),
});

export const KeyListSchema = Type.Object({
  items: Type.Array(
    Type.Object({
      ...KeyFields,
      lastUsedAt: Type.Union([Timestamp, Type.Null()], {
        description: 'When the key was last used (to within a minute), null if never.',
      }),
    }),
  ),
});
