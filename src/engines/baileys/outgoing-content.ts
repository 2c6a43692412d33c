/**
 * The gateway's OutgoingContent mapped to the content argument of Baileys' `sendMessage`. Pure: the
 * link preview (if any) is fetched beforehand by the connection through the engine's preview hook.
 *
 * Baileys never fetches anything on its own here: text always carries `linkPreview` (null when there is
 * no preview), because its built-in preview fetcher would bypass the gateway's network guard. Media are
 * passed as `{ url: <file path> }`, which Baileys streams from disk instead of reading into memory.
 */
import type { AnyMessageContent, WAUrlInfo } from 'baileys';
import { textWithUrl } from '../../messages/link-text.js';
import type { OutgoingContent } from '../engine.js';

/** What the outbox's Open Graph fetcher hands over for a link; the engine turns it into WhatsApp's preview. */
export interface LinkPreview {
  title: string;
  description?: string;
  /** The page's canonical URL, when it differs from the one sent. */
  canonicalUrl?: string;
  /** A small JPEG (WhatsApp shows ~192 px wide thumbnails). */
  jpegThumbnail?: Buffer;
}

/** The preview hook: answers null when the page has no usable preview (src/media/link-preview.ts fills it). */
export type LinkPreviewProvider = (url: string) => Promise<LinkPreview | null>;

export interface OutgoingContext {
  /** The chat the message goes to; a reaction's target lives there. */
  chatJid: string;
  /** For reactions whose content does not say: was the target message sent by this device? */
  targetSentByUs: (messageId: string) => boolean;
  /** For links: the preview fetched for `content.url`, or null for none. */
  linkPreview?: LinkPreview | null;
}

export function outgoingContentOf(content: OutgoingContent, context: OutgoingContext): AnyMessageContent {
  switch (content.kind) {
    case 'text':
      return { text: content.text, linkPreview: null };
    case 'image':
      return { image: { url: content.media.path }, mimetype: content.media.mimetype, ...caption(content.caption) };
    case 'video':
      return { video: { url: content.media.path }, mimetype: content.media.mimetype, ...caption(content.caption) };
    case 'audio':
      return { audio: { url: content.media.path }, mimetype: content.media.mimetype, ptt: content.ptt ?? false };
    case 'file':
      return {
        document: { url: content.media.path },
        mimetype: content.media.mimetype,
        ...(content.media.filename ? { fileName: content.media.filename } : {}),
        ...caption(content.caption),
      };
    case 'location':
      return {
        location: {
          degreesLatitude: content.latitude,
          degreesLongitude: content.longitude,
          ...(content.name ? { name: content.name } : {}),
          ...(content.address ? { address: content.address } : {}),
        },
      };
    case 'link': {
      const text = textWithUrl(content.text, content.url);
      return { text, linkPreview: context.linkPreview ? urlInfoOf(content.url, context.linkPreview) : null };
    }
    case 'reaction':
      return {
        react: {
          key: { remoteJid: context.chatJid, fromMe: content.fromMe ?? context.targetSentByUs(content.messageId), id: content.messageId },
          text: content.emoji,
        },
      };
  }
}

/** The url is appended when the text lacks it (src/messages/link-text.ts). */
function caption(text: string | undefined): { caption?: string } {
  return text ? { caption: text } : {};
}

function urlInfoOf(url: string, preview: LinkPreview): WAUrlInfo {
  return {
    'canonical-url': preview.canonicalUrl ?? url,
    'matched-text': url,
    title: preview.title,
    ...(preview.description ? { description: preview.description } : {}),
    ...(preview.jpegThumbnail ? { jpegThumbnail: preview.jpegThumbnail } : {}),
  };
}
