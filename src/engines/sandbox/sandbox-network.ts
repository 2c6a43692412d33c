/**
 * The simulated network shared by every sandbox device of the process: who is online under which number,
 * delivery from device to device, and the receipts a sender gets back.
 */
import { randomBytes } from 'node:crypto';
import type { InboundMessage, OutgoingContent, OutgoingMessage } from '../engine.js';
import type { SandboxConnection } from './sandbox-connection.js';

export interface SandboxTiming {
  /** After a send, the `delivered` receipt comes this much later. */
  deliveredDelayMs: number;
  /** And `read` this much after `delivered`. */
  readDelayMs: number;
}

const unixNow = () => Math.floor(Date.now() / 1000);

/** A message id shaped like the ones WhatsApp Web clients make. */
export const newSandboxMessageId = (): string => `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;

export class SandboxNetwork {
  /** Each device's newest connection. */
  private readonly latest = new Map<string, SandboxConnection>();
  private readonly onlineByPhone = new Map<string, Set<SandboxConnection>>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly timing: SandboxTiming) {}

  /** Makes `connection` its device's current one; answers the one it replaces, if any. */
  track(connection: SandboxConnection): SandboxConnection | undefined {
    const previous = this.latest.get(connection.deviceId);
    this.latest.set(connection.deviceId, connection);
    return previous === connection ? undefined : previous;
  }

  connectionOf(deviceId: string): SandboxConnection | undefined {
    return this.latest.get(deviceId);
  }

  attach(connection: SandboxConnection, phone: string): void {
    let connections = this.onlineByPhone.get(phone);
    if (!connections) this.onlineByPhone.set(phone, (connections = new Set()));
    connections.add(connection);
  }

  detach(connection: SandboxConnection): void {
    const phone = connection.account?.phone;
    const connections = phone === undefined ? undefined : this.onlineByPhone.get(phone);
    connections?.delete(connection);
    if (phone !== undefined && connections?.size === 0) this.onlineByPhone.delete(phone);
    if (this.latest.get(connection.deviceId) === connection) this.latest.delete(connection.deviceId);
  }

  /** Hands the message to every other online device of the recipient, then receipts go back to the sender. */
  deliver(sender: SandboxConnection, from: string, message: OutgoingMessage): void {
    this.later(0, () => {
      for (const recipient of this.onlineByPhone.get(message.to) ?? []) {
        // Rejected only when the recipient's actor stops first (it logs what it loses).
        if (recipient !== sender) recipient.receive(toInbound(from, message, unixNow())).catch(() => undefined);
      }
    });
    this.receiptsAfter(sender, message, 'sent');
  }

  /**
   * The receipts a message that got as far as `reached` still has to come, counted from now: what the
   * network does for a message it holds when the device comes back (the sandbox's timers do not survive a
   * restart, the messages' statuses do).
   */
  receiptsAfter(sender: SandboxConnection, message: { waMessageId: string; to: string }, reached: 'sent' | 'delivered'): void {
    const receipt = (status: 'delivered' | 'read') => () =>
      void sender.receipt({ waMessageId: message.waMessageId, status, recipient: message.to, timestamp: unixNow() }).catch(() => undefined);
    const { deliveredDelayMs, readDelayMs } = this.timing;
    if (reached === 'sent') {
      this.later(deliveredDelayMs, receipt('delivered'));
      this.later(deliveredDelayMs + readDelayMs, receipt('read'));
    } else this.later(readDelayMs, receipt('read'));
  }

  /** Runs `task` after `ms` unless the network is closed first. */
  later(ms: number, task: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      task();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  /** Gateway shutdown: nothing fires any more, every connection ends. */
  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([...this.latest.values()].map((connection) => connection.close()));
  }
}

/** What the recipient's device sees of a sent message. */
export function toInbound(from: string, message: OutgoingMessage, timestamp: number): InboundMessage {
  const base = { waMessageId: message.waMessageId, from, timestamp };
  const content: OutgoingContent = message.content;
  switch (content.kind) {
    case 'text':
      return { ...base, type: 'text', body: content.text };
    case 'image':
    case 'video':
    case 'file':
      return { ...base, type: content.kind, body: content.caption ?? '', media: mediaOf(content.media) };
    case 'audio':
      return { ...base, type: 'audio', body: '', media: mediaOf(content.media) };
    case 'location': {
      const { latitude, longitude, name, address } = content;
      return {
        ...base,
        type: 'location',
        body: name ?? address ?? '',
        location: { latitude, longitude, ...(name === undefined ? {} : { name }), ...(address === undefined ? {} : { address }) },
      };
    }
    case 'link':
      return { ...base, type: 'link', body: content.text };
    case 'reaction':
      return { ...base, type: 'reaction', body: content.emoji };
  }
}

function mediaOf(media: { mimetype: string; size: number; filename?: string }): NonNullable<InboundMessage['media']> {
  return { mimetype: media.mimetype, size: media.size, ...(media.filename === undefined ? {} : { filename: media.filename }) };
}
