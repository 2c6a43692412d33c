/**
 * A WhatsApp message received by Baileys (`messages.upsert`), mapped to the gateway's InboundMessage:
 * the `message.received` shape of src/messages/message-events.ts. Pure: the sender's phone digits are resolved by the caller
 * (a LID needs a lookup in the connection's LID mapping).
 */
import { type WAMessage, type proto, getContentType, normalizeMessageContent, toNumber } from 'baileys';
import type { InboundMessage } from '../engine.js';

/** Content that is protocol traffic (edits, deletes, votes, pins), not a message a user wrote. */
const NOT_A_MESSAGE: ReadonlySet<string> = new Set(['protocolMessage', 'pollUpdateMessage', 'keepInChatMessage', 'pinInChatMessage']);

/** A URL as WhatsApp clients linkify it: with a scheme or starting with www. */
const URL_IN_TEXT = /(?:https?:\/\/|\bwww\.)[^\s<>"]+/i;

const DEFAULT_MIMETYPE = 'application/octet-stream';

/**
 * The received message as the gateway reports it, or undefined when it carries nothing to report
 * (a decryption placeholder without content, or protocol traffic). `nowSeconds` stands in for a
 * missing timestamp.
 */
export function inboundMessageOf(message: WAMessage, from: string, nowSeconds = Math.floor(Date.now() / 1000)): InboundMessage | undefined {
  const id = message.key.id;
  const content = normalizeMessageContent(message.message);
  if (!id || !content) return undefined;
  const contentType = getContentType(content);
  if (!contentType || NOT_A_MESSAGE.has(contentType)) return undefined;

  const timestamp = toNumber(message.messageTimestamp ?? 0) || nowSeconds;
  const base = {
    waMessageId: id,
    from,
    timestamp,
    ...(message.pushName ? { pushName: message.pushName } : {}),
  };
  return { ...base, ...describeContent(content, contentType) };
}

type ContentFields = Pick<InboundMessage, 'type' | 'body' | 'media' | 'location'>;

function describeContent(content: proto.IMessage, contentType: keyof proto.IMessage): ContentFields {
  switch (contentType) {
    case 'conversation':
      return textOrLink(content.conversation ?? '', false);
    case 'extendedTextMessage': {
      const ext = content.extendedTextMessage!;
      return textOrLink(ext.text ?? '', !!ext.matchedText);
    }
    case 'imageMessage': {
      const image = content.imageMessage!;
      return { type: 'image', body: image.caption ?? '', media: mediaOf(image) };
    }
    case 'videoMessage':
    case 'ptvMessage': {
      const video = (content.videoMessage ?? content.ptvMessage)!;
      return { type: 'video', body: video.caption ?? '', media: mediaOf(video) };
    }
    case 'audioMessage':
      return { type: 'audio', body: '', media: mediaOf(content.audioMessage!) };
    case 'documentMessage': {
      const document = content.documentMessage!;
      return { type: 'file', body: document.caption ?? '', media: mediaOf(document, document.fileName) };
    }
    case 'stickerMessage':
      return { type: 'sticker', body: '', media: mediaOf(content.stickerMessage!) };
    case 'locationMessage': {
      const l = content.locationMessage!;
      return locationOf(l.degreesLatitude, l.degreesLongitude, l.comment, l.name, l.address);
    }
    case 'liveLocationMessage': {
      const l = content.liveLocationMessage!;
      return locationOf(l.degreesLatitude, l.degreesLongitude, l.caption);
    }
    case 'reactionMessage':
      // An empty text removes an earlier reaction; reported as such, with body "".
      return { type: 'reaction', body: content.reactionMessage!.text ?? '' };
    case 'contactMessage':
      return { type: 'contact', body: content.contactMessage!.displayName ?? '' };
    case 'contactsArrayMessage': {
      const array = content.contactsArrayMessage!;
      const names = (array.contacts ?? []).map((c) => c.displayName).filter((n): n is string => !!n);
      return { type: 'contact', body: array.displayName || names.join(', ') };
    }
    default:
      return { type: 'unknown', body: '' };
  }
}

function textOrLink(text: string, hasPreviewMatch: boolean): ContentFields {
  return { type: hasPreviewMatch || URL_IN_TEXT.test(text) ? 'link' : 'text', body: text };
}

interface MediaFields {
  mimetype?: string | null;
  fileLength?: number | Long | null;
}
type Long = Parameters<typeof toNumber>[0];

function mediaOf(media: MediaFields, filename?: string | null): NonNullable<InboundMessage['media']> {
  const size = media.fileLength === null || media.fileLength === undefined ? undefined : toNumber(media.fileLength);
  return {
    mimetype: media.mimetype || DEFAULT_MIMETYPE,
    ...(size === undefined ? {} : { size }),
    ...(filename ? { filename } : {}),
  };
}

function locationOf(
  latitude: number | null | undefined,
  longitude: number | null | undefined,
  caption?: string | null,
  name?: string | null,
  address?: string | null,
): ContentFields {
  return {
    type: 'location',
    body: caption || [name, address].filter((part): part is string => !!part).join(', '),
    location: {
      latitude: latitude ?? 0,
      longitude: longitude ?? 0,
      ...(name ? { name } : {}),
      ...(address ? { address } : {}),
    },
  };
}
