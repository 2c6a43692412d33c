/**
 * Read receipts and presence (POST /chats/:chatId/read, /chats/:chatId/presence, /presence): not queued,
 * they need the live connection of an online session. Read receipts change what the device has read, so
 * they are recorded (ChatRead on `inbox-<deviceId>`) before they are sent (docs/architecture.md, invariant 2).
 */
import { createHash } from 'node:crypto';
import type { ChatPresence, EngineConnection, OwnPresence } from '../engines/engine.js';
import { DomainError, sessionNotOnline } from '../errors/domain-error.js';
import { translatingEngineFailures } from '../engines/engine-failure.js';
import { deterministicEventId } from '../eventstore/event-id.js';
import type { InboxCommands } from '../inbox/inbox-commands.js';
import type { ChatEvent } from '../inbox/inbox-events.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import type { MessageIndex } from './message-index.js';

export interface ChatCommandsDeps {
  /** ChatRead goes through the inbox stream's one writer. */
  inbox: Pick<InboxCommands, 'record'>;
  index: Pick<MessageIndex, 'unread' | 'participantOf'>;
  /** The live connection while the device's session is online. */
  connection: (deviceId: string) => EngineConnection | undefined;
  /** The session's state as this process knows it, for the words of a refusal. */
  sessionState?: (deviceId: string) => string | undefined;
  projections: ReadModelProgress;
  now?: () => number;
}

export class ChatCommands {
  constructor(private readonly deps: ChatCommandsDeps) {}

  /** Read receipts for the given received messages of the chat, or every unread one; answers how many. */
  async read(deviceId: string, chatId: string, messageIds?: string[]): Promise<number> {
    const connection = this.online(deviceId);
    const messages = messageIds
      ? this.received(deviceId, chatId, messageIds)
      : this.deps.index.unread(deviceId, chatId);
    if (messages.length === 0) return 0;
    const waMessageIds = messages.map((m) => m.waMessageId);
    const timestamp = Math.floor((this.deps.now?.() ?? Date.now()) / 1000);
    const event: ChatEvent = { type: 'ChatRead', data: { deviceId, chatId, waMessageIds, timestamp } };
    const digest = createHash('sha256').update(waMessageIds.join(',')).digest('hex');
    const position = await this.deps.inbox.record(
      deviceId,
      event,
      deterministicEventId(`${deviceId}/read/${chatId}/${digest}`),
    );
    if (!connection.markRead) throw new DomainError('engine_error', 'this engine cannot send read receipts');
    await connection.markRead(chatId, messages);
    await this.deps.projections.settle(position);
    return messages.length;
  }

  async presence(deviceId: string, state: ChatPresence | OwnPresence, chatId?: string): Promise<void> {
    const connection = this.online(deviceId);
    if (!connection.sendPresence) throw new DomainError('engine_error', 'this engine cannot send presence');
    await connection.sendPresence(state, chatId);
  }

  private online(deviceId: string): EngineConnection {
    const connection = this.deps.connection(deviceId);
    const sessionState = () => this.deps.sessionState?.(deviceId);
    if (!connection) throw sessionNotOnline(sessionState());
    return translatingEngineFailures(connection, sessionState);
  }

  /** Messages named by the caller must be received messages of this chat; those read already are left out. */
  private received(
    deviceId: string,
    chatId: string,
    ids: string[],
  ): Array<{ waMessageId: string; participant?: string }> {
    const named = [...new Set(ids)].map((waMessageId) => {
      const found = this.deps.index.participantOf(deviceId, waMessageId);
      if (!found || found.fromMe || found.chatId !== chatId) {
        throw new DomainError('message_not_found', `no message ${waMessageId} was received in the chat ${chatId}`);
      }
      return { waMessageId, read: found.read, ...(found.participant ? { participant: found.participant } : {}) };
    });
    return named.filter((m) => !m.read).map(({ read: _, ...message }) => message);
  }
}
