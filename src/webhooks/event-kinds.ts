/**
 * The webhook event kinds, in a module of their own that imports nothing: the dashboard (dashboard/) bundles
 * this very list for its kind picker, so it must load in a browser, where envelope.ts (node:crypto) cannot.
 */
export const WEBHOOK_EVENT_KINDS = [
  'message.received',
  'message.status',
  'session.state',
  'message.edited',
  'message.revoked',
  'poll.vote',
  'presence.update',
  'call.received',
  'group.participants',
  'group.updated',
  'session.health',
  'chat.updated',
  'chat.deleted',
  'message.deleted',
  'history.synced',
  'group.join_request',
  'status.received',
  'channel.message',
  'channel.reaction',
  'label.updated',
  'chat.labels',
] as const;
export type WebhookEventKind = (typeof WEBHOOK_EVENT_KINDS)[number];

/** In a hook's `events`: every kind, present and future. */
export const ALL_EVENTS = '*';
/** What a hook's `events` may list. */
export type HookEventName = WebhookEventKind | typeof ALL_EVENTS;
