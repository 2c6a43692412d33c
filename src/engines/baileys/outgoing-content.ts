/**
 * The gateway's OutgoingContent mapped to the content argument of Baileys' `sendMessage`. Pure: the
 * link preview (if any) is fetched beforehand by the connection through the engine's preview hook.
 *
 * Baileys never fetches anything on its own here: text always carries `linkPreview` (null when there is
 * no preview), because its built-in preview fetcher would bypass the gateway's network guard. Media are
 * passed as `{ url: <file path> }`, which Baileys streams from disk instead of reading into memory.
 */
import type { AnyMessageContent, MiscMessageGenerationOptions, WAMessage, WAUrlInfo, proto } from 'baileys';
import { textWithUrl } from '../../messages/link-text.js';
import { vCardOf } from '../../messages/vcard.js';
import type { OutgoingContent, OutgoingMessage } from '../engine.js';
import { jidOfChat } from './jid.js';

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
  /** The linked account's JID: the author of our own messages (group reactions and replies name it). */
  accountJid?: string;
}

/** The whole message: content with mentions (and the forwarded mark), and the options that quote `replyTo`. */
export function outgoingMessageOf(
  message: OutgoingMessage,
  context: OutgoingContext,
): { content: AnyMessageContent; options: MiscMessageGenerationOptions } {
  let content = outgoingContentOf(message.content, context) as AnyMessageContent & {
    mentions?: string[];
    contextInfo?: proto.IContextInfo;
  };
  if (message.mentions?.length && message.content.kind === 'poll') {
    // Baileys puts a poll's mentions beside it (messageContextInfo); withPollContextInfo moves them onto the poll.
    content = { ...content, contextInfo: { ...content.contextInfo, mentionedJid: message.mentions.map(jidOfChat) } };
  } else if (message.mentions?.length && MENTIONABLE.has(message.content.kind)) {
    content = { ...content, mentions: message.mentions.map(jidOfChat) };
  }
  const options: MiscMessageGenerationOptions = { messageId: message.waMessageId };
  if (message.replyTo) options.quoted = quotedOf(message.replyTo, context.chatJid, context.accountJid);
  return { content, options };
}

/** Kinds whose text or caption may mention someone (Baileys' Mentionable contents). */
const MENTIONABLE: ReadonlySet<string> = new Set(['text', 'link', 'image', 'video', 'file', 'forward']);

/** The poll creation messages Baileys builds (single choice, multiple choice, announcement groups). */
const POLL_KEYS = ['pollCreationMessage', 'pollCreationMessageV2', 'pollCreationMessageV3'] as const;

/**
 * Baileys' `patchMessageBeforeSending`: it merges a poll's contextInfo into the first key of the built
 * message, which for a poll is messageContextInfo (where the field does not exist, so the mentions would
 * be dropped when encoded). Moves it onto the poll creation message, where WhatsApp reads mentions.
 */
export function withPollContextInfo<M extends proto.IMessage>(message: M): M {
  const sentToOwnDevice = message.deviceSentMessage?.message;
  if (sentToOwnDevice) {
    const inner = withPollContextInfo(sentToOwnDevice);
    return inner === sentToOwnDevice
      ? message
      : { ...message, deviceSentMessage: { ...message.deviceSentMessage, message: inner } };
  }
  const { contextInfo: stray, ...messageContextInfo } = (message.messageContextInfo ??
    {}) as proto.IMessageContextInfo & { contextInfo?: proto.IContextInfo };
  const pollKey = POLL_KEYS.find((key) => message[key]);
  if (!stray || !pollKey) return message;
  const poll = message[pollKey]!;
  return { ...message, messageContextInfo, [pollKey]: { ...poll, contextInfo: { ...stray, ...poll.contextInfo } } };
}

/** Baileys builds the reply's contextInfo (stanzaId, participant, quotedMessage) from a WAMessage. */
function quotedOf(
  target: NonNullable<OutgoingMessage['replyTo']>,
  chatJid: string,
  accountJid: string | undefined,
): WAMessage {
  const group = chatJid.endsWith('@g.us');
  const participant = target.fromMe ? accountJid : target.from ? jidOfChat(target.from) : undefined;
  return {
    key: {
      remoteJid: chatJid,
      fromMe: target.fromMe,
      id: target.waMessageId,
      ...(group && participant ? { participant } : {}),
    },
    message: { conversation: target.body },
  };
}

const FORWARDED: proto.IContextInfo = { isForwarded: true, forwardingScore: 1 };

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
    case 'reaction': {
      const fromMe = content.fromMe ?? context.targetSentByUs(content.messageId);
      // In a group WhatsApp attributes the target by its author; without one, the author never sees the reaction.
      const author = !context.chatJid.endsWith('@g.us')
        ? undefined
        : fromMe
          ? context.accountJid
          : content.sender
            ? jidOfChat(content.sender)
            : undefined;
      return {
        react: {
          key: {
            remoteJid: context.chatJid,
            fromMe,
            id: content.messageId,
            ...(author ? { participant: author } : {}),
          },
          text: content.emoji,
        },
      };
    }
    case 'sticker':
      return { sticker: { url: content.media.path }, mimetype: content.media.mimetype };
    case 'contact': {
      const contacts = content.contacts.map((card) => ({ displayName: card.name, vcard: vCardOf(card) }));
      return {
        contacts: {
          displayName: contacts.length === 1 ? contacts[0].displayName : `${contacts.length} contacts`,
          contacts,
        },
      };
    }
    case 'poll':
      return {
        poll: {
          name: content.question,
          values: content.options,
          // 0: any number of options; 1: a single choice.
          selectableCount: content.multipleAnswers ? 0 : 1,
          messageSecret: Buffer.from(content.secret, 'base64'),
        },
      };
    case 'forward': {
      const inner = outgoingContentOf(content.content, context) as AnyMessageContent & {
        contextInfo?: proto.IContextInfo;
      };
      return { ...inner, contextInfo: { ...inner.contextInfo, ...FORWARDED } };
    }
    case 'edit':
      return { text: content.text, edit: { remoteJid: context.chatJid, fromMe: true, id: content.messageId } };
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
