import { DomainError } from '../../errors/domain-error.js';

/** Answers many routes document in the same words (OpenAPI `responses` entries), and the errors behind some of them. */
export const NOT_ONLINE = { description: 'The session is not online (`session_not_online`).' };

/** Fresh lookups of a number (checks, avatars, about texts) beyond the device's allowance. */
export const LOOKUPS_RATE_LIMITED = {
  description: 'Too many fresh lookups (`rate_limited`); `Retry-After` says how many seconds to wait.',
};

/**
 * 503 `busy` where no code is on show though the state (where the device runs, or as recorded) says one is, or the
 * device is between processes: a moment later it is (issue 30: a `409` saying "the session is qr" contradicted itself).
 */
export const codeNotShownYet = (deviceId: string) =>
  new DomainError(
    'busy',
    `device ${deviceId} shows no code at this moment (it is moving between processes, or its code is being renewed); try again`,
    { retryAfterSeconds: 1 },
  );
