import Type from 'typebox';
import { NUMBER_KEYWORD, type NumberField } from '../../messages/phone-number.js';
import { SESSION_STATES } from '../../sessions/session-events.js';
import { ERROR_CODES } from '../../errors/error-codes.js';

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.Enum(ERROR_CODES, {
      description: 'Stable, machine-readable error code: one of the catalogue (src/errors/error-codes.ts).',
    }),
    detail: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
    reason: Type.Optional(
      Type.String({ description: 'Why, in one stable word, where a code has several causes (`media_unavailable`).' }),
    ),
    requiredScope: Type.Optional(
      Type.Union([Type.Literal('read'), Type.Literal('send'), Type.Literal('manage')], {
        description: 'The scope the route needs (`insufficient_scope`).',
      }),
    ),
    requestId: Type.Optional(Type.String()),
  },
  { description: 'RFC 9457 problem details.' },
);

export const DEVICE_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$';

export const DeviceId = Type.String({ pattern: DEVICE_ID_PATTERN, description: 'Device id.' });

export const DeviceParams = Type.Object({ deviceId: DeviceId });

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC.' });

export const Cursor = Type.String({
  minLength: 1,
  maxLength: 512,
  description: 'The `nextCursor` of the previous page.',
});

export const Limit = (max: number, fallback: number) =>
  Type.Integer({
    minimum: 1,
    maximum: max,
    default: fallback,
    description: `Page size, 1..${max} (default ${fallback}).`,
  });

export const SessionState = Type.Enum(SESSION_STATES, { description: 'Session state.' });

/** Why a session is not online and when it tries again: on the session and device answers. */
export const SessionDiagnostics = {
  lastError: Type.Optional(
    Type.Object(
      {
        code: Type.String({
          description:
            'Stable: e.g. `dns_failure`, `connect_refused`, `timeout`, `tls`, `proxy`, `client_outdated`, `too_many_attempts`, `connection_replaced`, `account_restricted`.',
        }),
        message: Type.String({ description: "In words, with the engine's own message." }),
      },
      {
        description:
          'Why the session failed, or, while `reconnecting`, why the last try failed. Cleared when it is online, closed, logged out or opened again.',
      },
    ),
  ),
  attempt: Type.Optional(
    Type.Integer({ minimum: 1, description: 'While `reconnecting`: how many tries have failed so far.' }),
  ),
  nextRetryAt: Type.Optional(
    Type.String({ format: 'date-time', description: 'While `reconnecting`: when the next try starts.' }),
  ),
};

/** How the API reads numbers, for descriptions (src/messages/phone-number.ts). */
export const NUMBER_FORMS =
  'Digits with the country code (e.g. 4915112345678); also accepted and read as such: `+49 151 1234-5678`, `+49 (151) 12345678`, ' +
  '`0049 151…`, and JIDs `4915112345678@s.whatsapp.net` / `@c.us`. A national number (leading 0) is refused: add the country code.';

/** A field that takes a number, read forgivingly before it is validated (src/http/validation.ts). */
export const numberField = (
  field: NumberField,
  pattern: string,
  description: string,
  extra: Record<string, unknown> = {},
) => Type.String({ pattern, description: `${description} ${NUMBER_FORMS}`, [NUMBER_KEYWORD]: field, ...extra });
