/** Answers many routes document in the same words (OpenAPI `responses` entries). */
export const NOT_ONLINE = { description: 'The session is not online (`session_not_online`).' };

/** Fresh lookups of a number (checks, avatars, about texts) beyond the device's allowance. */
export const LOOKUPS_RATE_LIMITED = {
  description: 'Too many fresh lookups (`rate_limited`); `Retry-After` says how many seconds to wait.',
};
