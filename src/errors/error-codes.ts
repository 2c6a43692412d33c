/**
 * Every error code the API answers with, its HTTP status and what it means: the one catalogue that the
 * problem+json bodies (`code`), the domain's refusals (domain-error.ts) and /openapi.json (the `code` enum
 * and the examples of every error response) are held to. A code not listed here cannot be answered.
 */
export const ERROR_CATALOGUE = {
  invalid_request: { status: 400, meaning: 'The request does not match its schema; `errors` names the fields.' },
  malformed_json: { status: 400, meaning: 'The body is not valid JSON.' },
  unauthorized: { status: 401, meaning: 'A valid API key is required.' },
  forbidden: { status: 403, meaning: 'This key may not use this route.' },
  not_group_admin: { status: 403, meaning: 'The account is not an admin of the group.' },
  not_channel_admin: { status: 403, meaning: 'The account is not an owner or admin of the channel.' },
  insufficient_scope: {
    status: 403,
    meaning: 'The key lacks the scope this route needs; `requiredScope` names it.',
  },
  not_found: { status: 404, meaning: 'No such device or resource.' },
  message_not_found: { status: 404, meaning: 'The gateway saw no such message.' },
  hooks_not_configured: { status: 404, meaning: 'The device has no webhook (or none for this kind).' },
  media_unavailable: { status: 404, meaning: 'The media cannot be served; `reason` says why.' },
  method_not_allowed: { status: 405, meaning: 'The path exists, not with this method.' },
  request_timeout: { status: 408, meaning: 'The request was not received in time.' },
  device_exists: { status: 409, meaning: 'A device with this id exists.' },
  session_not_online: { status: 409, meaning: 'The operation needs an online session; `detail` names the state.' },
  session_not_linked: { status: 409, meaning: 'No account is linked to the device.' },
  qr_unavailable: { status: 409, meaning: 'No QR code is shown in this session state.' },
  message_sending: { status: 409, meaning: 'The message is being sent; try again once it is sent or failed.' },
  message_failed: { status: 409, meaning: 'The message failed; it cannot be changed.' },
  engine_unavailable: { status: 409, meaning: "The device's engine is not available in this gateway." },
  not_editable: { status: 409, meaning: 'The message cannot be edited (kind, age or state).' },
  not_forwardable: { status: 409, meaning: 'The message cannot be forwarded.' },
  pairing_unavailable: { status: 409, meaning: 'No pairing code can be issued now.' },
  too_many_keys: { status: 409, meaning: 'The device has as many scoped keys as it may; delete one first.' },
  not_sandbox_device: { status: 409, meaning: 'The device does not use the sandbox engine.' },
  recipient_unresponsive: {
    status: 409,
    meaning: 'The number never wrote to this account and got the unansweredLimit of messages; nothing was queued.',
  },
  concurrent_change: { status: 409, meaning: 'Another request or process changed the same thing; try again.' },
  media_expired: { status: 410, meaning: 'The media were kept, and are past their retention.' },
  payload_too_large: { status: 413, meaning: 'The body, a field or what it would record is too large.' },
  unsupported_media_type: { status: 415, meaning: 'The content type or media type is not accepted.' },
  expectation_failed: { status: 417, meaning: 'An `Expect` header other than `100-continue`.' },
  upgrade_required: { status: 426, meaning: 'The route takes a WebSocket upgrade, not a plain request.' },
  idempotency_key_reused: { status: 422, meaning: 'The Idempotency-Key was used for another request.' },
  invalid_pairing_code: { status: 422, meaning: 'The pairing code is not the one the device shows.' },
  rate_limited: { status: 429, meaning: 'Too many requests; `Retry-After` says when to try again.' },
  headers_too_large: { status: 431, meaning: 'The request headers are too large.' },
  internal_error: { status: 500, meaning: 'An unexpected error; the request id is in the server log.' },
  engine_error: { status: 502, meaning: 'The network refused or did not answer; nothing was recorded.' },
  shutting_down: { status: 503, meaning: 'The gateway is stopping.' },
  busy: { status: 503, meaning: 'The gateway is busy; `Retry-After` says when to try again.' },
  server_busy: { status: 503, meaning: 'Too many large bodies at once; `Retry-After` says when to try again.' },
  store_unavailable: { status: 503, meaning: 'The event store cannot be reached; nothing was recorded.' },
  store_refused: { status: 503, meaning: 'The event store refused the write; nothing was recorded.' },
  read_models_lagging: { status: 503, meaning: 'Recorded, not readable yet; retry with the same Idempotency-Key.' },
  hook_secret_unreadable: { status: 503, meaning: 'The webhook secret was sealed with another ENCRYPTION_KEY.' },
  insufficient_storage: { status: 507, meaning: 'The disk is full; nothing was stored.' },
  too_many_webhooks: {
    status: 409,
    meaning: 'The device (or the gateway, for global webhooks) has as many webhooks as allowed.',
  },
  chat_not_found: { status: 404, meaning: 'The device has no such chat.' },
  label_not_found: { status: 404, meaning: 'The account has no such label.' },
  not_business_account: { status: 409, meaning: 'Labels need a WhatsApp Business account; this one is not.' },
  empty_audience: { status: 422, meaning: 'A status needs at least one number to see it.' },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

/** The codes answered with an HTTP status, in catalogue order. */
export const codesOfStatus = (status: number): ErrorCode[] =>
  ERROR_CODES.filter((code) => ERROR_CATALOGUE[code].status === status);
