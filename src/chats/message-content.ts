/**
 * What a queued (sent) message's content shows as in the message index: its type, its text, and whether its media
 * is stored by the gateway.
 */
import type { InboundType } from '../messages/message-events.js';
import { type QueuedContent, mediaOf } from '../outbox/stream/outbox-events.js';

/** The message type a queued content shows as. */
export function typeOfContent(content: QueuedContent): InboundType {
  switch (content.kind) {
    case 'forward':
      return typeOfContent(content.content);
    case 'edit':
      return 'text';
    default:
      return content.kind;
  }
}

export function bodyOfContent(content: QueuedContent): string {
  switch (content.kind) {
    case 'text':
    case 'link':
      return content.text;
    case 'image':
    case 'video':
    case 'file':
      return content.caption ?? '';
    case 'location':
      return content.name ?? content.address ?? '';
    case 'reaction':
      return content.emoji;
    case 'contact':
      return content.contacts.map((c) => c.name).join(', ');
    case 'poll':
      return content.question;
    case 'forward':
      return bodyOfContent(content.content);
    default:
      return '';
  }
}

export const MEDIA_TYPES: ReadonlySet<string> = new Set<InboundType>(['image', 'video', 'audio', 'file', 'sticker']);

/** Whether a sent message's content carries media stored by the gateway (not a url fetched at send time). */
export function hasStoredMedia(type: InboundType, content: string | null): boolean {
  // The type first: the content is parsed only for media messages.
  return (
    MEDIA_TYPES.has(type) && content !== null && mediaOf(JSON.parse(content) as QueuedContent)?.source === 'stored'
  );
}
