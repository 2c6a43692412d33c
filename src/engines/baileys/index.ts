/** What the rest of the gateway uses of the Baileys engine; none of it loads Baileys until a device connects. */
export { createLazyBaileysEngine } from './lazy-baileys-engine.js';
export type { BaileysEngineOptions } from './baileys-engine.js';
export { newWaMessageId, WA_MESSAGE_ID_PATTERN } from '../../messages/message-id.js';
export type { LinkPreview, LinkPreviewProvider } from './outgoing-content.js';
export type { PollLookup } from './baileys-inbound.js';
