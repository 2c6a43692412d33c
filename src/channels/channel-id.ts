/**
 * Channel ids (API Part 3, "Channels (newsletters)"): `<digits>@newsletter`, as WhatsApp writes them. A channel
 * is not a chat: its posts are kept apart from the chats (GET /chats never lists one) and leave as `channel.message`.
 */
export const CHANNEL_ID_PATTERN = '^[0-9]{5,32}@newsletter$';

const CHANNEL = new RegExp(CHANNEL_ID_PATTERN);

export const isChannelId = (chatId: string | undefined): boolean => chatId !== undefined && CHANNEL.test(chatId);

/** `https://whatsapp.com/channel/<code>` (or the code alone) → the code. */
export const channelCodeOf = (linkOrCode: string): string =>
  linkOrCode
    .trim()
    .replace(/^https?:\/\/(www\.)?whatsapp\.com\/channel\//i, '')
    .replace(/[/?#].*$/, '');

export const channelLink = (code: string): string => `https://whatsapp.com/channel/${code}`;
