/**
 * Chat ids (docs/architecture.md, "Message kinds, chats and received media"): a number for a direct chat, a group id as WhatsApp
 * writes it, or `<digits>@lid` for a sender whose number WhatsApp hides and the gateway could not resolve.
 */
export const PHONE_PATTERN = '^[0-9]{7,15}$';
export const GROUP_ID_PATTERN = '^[0-9]{5,32}(-[0-9]{5,20})?@g\\.us$';
export const LID_PATTERN = '^[0-9]{1,32}@lid$';
/** Any chat id: one of the three. */
export const CHAT_ID_PATTERN = `(${PHONE_PATTERN})|(${GROUP_ID_PATTERN})|(${LID_PATTERN})`;

const GROUP = new RegExp(GROUP_ID_PATTERN);
const LID = new RegExp(LID_PATTERN);

export const isGroupId = (chatId: string): boolean => GROUP.test(chatId);
export const isLidId = (chatId: string): boolean => LID.test(chatId);
