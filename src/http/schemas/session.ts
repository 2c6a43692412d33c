import Type from 'typebox';
import { SessionDiagnostics, SessionState, Timestamp } from './common.js';

export const SessionStateSchema = Type.Object({
  state: SessionState,
  health: Type.Optional(
    Type.Enum(['ok', 'silent'] as const, {
      description:
        'The session watchdog: `silent` while an online session hears nothing (no message, receipt, presence) for WATCHDOG_SILENCE after it sent; `ok` otherwise.',
    }),
  ),
  phone: Type.Optional(Type.String({ pattern: '^[0-9]{5,20}$', description: 'Number of the linked account.' })),
  since: Timestamp,
  ...SessionDiagnostics,
  storageFailing: Type.Optional(
    Type.Boolean({
      description:
        "Present (true) while the gateway cannot write (a full disk): the session's changes are not recorded, and `since` may be older than `state`.",
    }),
  ),
});

const Phone = Type.String({ pattern: '^[0-9]{5,20}$', description: 'Number of the linked account, digits only.' });

export const SessionStateOnlySchema = Type.Object({ state: SessionState });

export const ClosedSessionSchema = Type.Object({
  state: Type.Enum(['closed', 'logged_out'] as const, {
    description: '`logged_out` when the account was unlinked (or had been before), else `closed`.',
  }),
});

export const CloseSessionBody = Type.Object(
  {
    logout: Type.Optional(
      Type.Boolean({
        description: 'Also unlink the device from the account and wipe its credentials: the next open shows a QR code.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const QrSchema = Type.Object({
  qr: Type.String({ minLength: 1, description: 'The text to encode in a QR code (what the phone scans).' }),
  expiresAt: Timestamp,
});

export const MeSchema = Type.Object({
  phone: Phone,
  jid: Type.String({ minLength: 1, description: "The account's WhatsApp address." }),
  name: Type.Optional(Type.String({ description: "The account's display name, when the network tells it." })),
});

export const PairBody = Type.Object(
  {
    phone: Type.String({
      pattern: '^[0-9]{7,15}$',
      description: 'The number of the account to link, digits only with the country code: its phone types the code.',
    }),
  },
  { additionalProperties: false },
);

export const PairingSchema = Type.Object({
  state: Type.Literal('pairing'),
  pairingCode: Type.String({
    pattern: '^[A-Z0-9]{4}-[A-Z0-9]{4}$',
    examples: ['K7QX-2M9P'],
    description: 'Type it on the phone: Linked devices → Link with phone number.',
  }),
  expiresAt: Timestamp,
});
