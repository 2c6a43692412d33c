/**
 * What the send commands need to know of the messages a device has seen, sent or received (replies,
 * forwards, edits): a port, filled by the message index (src/chats/message-index.ts) in the composition root.
 */
import type { InboundMedia, InboundType } from '../../messages/message-events.js';
import type { QueuedContent } from '../stream/outbox-events.js';

export interface SeenMessage {
  waMessageId: string;
  chatId: string;
  /** Sent by this account (through the outbox, or from the phone). */
  fromMe: boolean;
  /** The sender (number or `@lid` id; the participant in a group); "" for our own. */
  from: string;
  type: InboundType;
  body: string;
  /** Outgoing through this gateway: the outbox item, its content and its latest status. */
  outboxId?: string;
  content?: QueuedContent;
  status?: string;
  /** Unix seconds when the network accepted it (`sent`). */
  sentAt?: number;
  revoked: boolean;
  /** Received media, as recorded. */
  media?: InboundMedia;
  /** When the received media was stored (epoch ms). */
  mediaStoredAt?: number;
  /** The received message's other content, as recorded (location, contacts). */
  received?: {
    location?: { latitude: number; longitude: number; name?: string; address?: string };
    contacts?: Array<{ name: string; phone: string; organization?: string; email?: string }>;
  };
}

/** What a reply needs of the message it quotes. */
export type QuotedMessage = Pick<SeenMessage, 'chatId' | 'fromMe' | 'from' | 'type' | 'body'>;

export interface SeenMessages {
  find(deviceId: string, waMessageId: string): SeenMessage | undefined;
  /** The quoted message of a reply alone: read on every send with `replyTo`, so cheaper than find(). */
  quoted?(deviceId: string, waMessageId: string): QuotedMessage | undefined;
}
