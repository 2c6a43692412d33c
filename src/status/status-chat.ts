/**
 * Statuses (stories, API Part 3): a status is a message to `status@broadcast` with the audience that sees it
 * (WhatsApp's statusJidList). Posted through the outbox like any send; the statuses of others arrive as
 * inbound messages of that chat and leave as `status.received`, never as a chat of their own.
 */
export const STATUS_CHAT = 'status@broadcast';

export const isStatusChat = (chatId: string | undefined): boolean => chatId === STATUS_CHAT;

/** How long a status is shown (and listed by GET /status). */
export const STATUS_LIFETIME_MS = 24 * 60 * 60 * 1000;
