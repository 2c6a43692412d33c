/**
 * Read receipts and presence (POST /chats/:chatId/read, /chats/:chatId/presence, /presence): not queued,
 * they need the live connection of an online session. Read receipts change what the device has read, so
 * they are recorded (ChatRead on `inbox-<deviceId>`) before they are sent (docs/architecture.md, invariant 2).
 */
import { createHash } from 'node:crypto';
import type {
  ChatChange,
  ChatMessageRef,
  ChatOperations,
  ChatPresence,
  EngineConnection,
  OwnPresence,
} from '../engines/engine.js';
import { DomainError, sessionNotOnline } from '../errors/domain-error.js';
import { engineSupports, translatingEngineFailures } from '../engines/engine-failure.js';
import { deterministicEventId, orderedUuid } from '../eventstore/event-id.js';
import { type InboxCommands, activityEventId } from '../inbox/inbox-commands.js';
import type { ChatEvent, ChatUpdatedData, MutedUntil } from '../inbox/inbox-events.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import type { MessageIndex } from './message-index.js';

export interface ChatCommandsDeps {
  /** ChatRead goes through the inbox stream's one writer. */
  inbox: Pick<InboxCommands, 'record'>;
  index: Pick<
    MessageIndex,
    'unread' | 'participantOf' | 'hasChat' | 'lastMessageOf' | 'oldestMessageOf' | 'messageRef'
  >;
  /** The live connection while the device's session is online. */
  connection: (deviceId: string) => EngineConnection | undefined;
  /** The session's state as this process knows it, for the words of a refusal. */
  sessionState?: (deviceId: string) => string | undefined;
  projections: ReadModelProgress;
  now?: () => number;
}

/** PATCH /chats/:chatId: each field optional; `muted`: false, true (for ever) or an ISO time. */
export interface ChatPatch {
  archived?: boolean;
  pinned?: boolean;
  muted?: boolean | string;
  unread?: boolean;
}

export type PinDuration = '24h' | '7d' | '30d';
const PIN_SECONDS: Readonly<Record<PinDuration, number>> = { '24h': 86_400, '7d': 604_800, '30d': 2_592_000 };

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

  /**
   * Archive, pin, mute, mark unread or read: made on the network one change at a time, recorded (ChatUpdated) once
   * it took them. A change that failed after others went through records those, then answers the failure.
   */
  async modify(deviceId: string, chatId: string, patch: ChatPatch): Promise<void> {
    const ops = this.chatOps(deviceId, chatId);
    const last = this.deps.index.lastMessageOf(deviceId, chatId);
    const done: Omit<ChatUpdatedData, 'deviceId' | 'chatId'> = {};
    let failure: Error | undefined;
    try {
      if (patch.archived !== undefined) {
        await ops.modify(chatId, { archived: patch.archived }, last);
        done.archived = patch.archived;
      }
      if (patch.pinned !== undefined) {
        await ops.modify(chatId, { pinned: patch.pinned }, last);
        done.pinned = patch.pinned;
      }
      if (patch.muted !== undefined) {
        const mutedUntil = mutedUntilOf(patch.muted);
        await ops.modify(chatId, { mutedUntilMs: mutedUntilMsOf(mutedUntil) }, last);
        done.mutedUntil = mutedUntil;
      }
      if (patch.unread !== undefined) {
        await ops.modify(chatId, { unread: patch.unread }, last);
        done.unread = patch.unread;
      }
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
    }
    if (Object.keys(done).length > 0)
      await this.recordChange(deviceId, { type: 'ChatUpdated', data: { deviceId, chatId, ...done } });
    if (failure !== undefined) throw failure;
  }

  /** Deletes the chat for this account (`cleared: false`) or empties it (`cleared: true`). */
  async remove(deviceId: string, chatId: string, cleared: boolean): Promise<void> {
    const ops = this.chatOps(deviceId, chatId);
    const change: ChatChange = cleared ? { cleared: true } : { deleted: true };
    await ops.modify(chatId, change, this.deps.index.lastMessageOf(deviceId, chatId));
    await this.recordChange(deviceId, { type: 'ChatDeleted', data: { deviceId, chatId, cleared } });
  }

  async star(deviceId: string, waMessageId: string, starred: boolean): Promise<void> {
    const { ops, chatId, ref } = this.messageOps(deviceId, waMessageId);
    await ops.star(chatId, ref, starred);
    await this.recordChange(deviceId, { type: 'MessageStarred', data: { deviceId, chatId, waMessageId, starred } });
  }

  /** Pins a message in its chat for `duration`, or unpins it (undefined). */
  async pin(deviceId: string, waMessageId: string, duration: PinDuration | undefined): Promise<void> {
    const { ops, chatId, ref } = this.messageOps(deviceId, waMessageId);
    const seconds = duration ? PIN_SECONDS[duration] : 0;
    await ops.pin(chatId, ref, seconds);
    const now = this.deps.now?.() ?? Date.now();
    const pinnedUntil = duration ? new Date(now + seconds * 1000).toISOString() : null;
    await this.recordChange(deviceId, { type: 'MessagePinned', data: { deviceId, chatId, waMessageId, pinnedUntil } });
  }

  /** Deletes a message for this account only. */
  async deleteForMe(deviceId: string, waMessageId: string): Promise<void> {
    const { ops, chatId, ref } = this.messageOps(deviceId, waMessageId);
    await ops.deleteForMe(chatId, ref);
    // The id the engine's report of the same deletion gets: recorded once whoever reports it first.
    const eventId = activityEventId(deviceId, { kind: 'message_deleted', chatId, waMessageId });
    await this.recordChange(deviceId, { type: 'MessageDeleted', data: { deviceId, chatId, waMessageId } }, eventId);
  }

  /**
   * Asks the phone for up to `count` older messages of the chat, before the oldest one the index holds. Nothing is
   * recorded here: the answer comes later as a history chunk (HistoryImported, `history.synced`). Answers the
   * message the request starts from.
   */
  async fetchHistory(deviceId: string, chatId: string, count: number): Promise<ChatMessageRef> {
    const ops = this.chatOps(deviceId, chatId);
    const oldest = this.deps.index.oldestMessageOf(deviceId, chatId);
    // A chat row always has a message; one that has none is a chat the index does not know.
    if (!oldest) throw new DomainError('chat_not_found', `the device has no chat ${chatId}`);
    const fetchHistory = engineSupports(ops.fetchHistory?.bind(ops), 'on-demand history');
    await fetchHistory(chatId, count, oldest);
    return oldest;
  }

  private async recordChange(deviceId: string, event: ChatEvent, eventId = orderedUuid()): Promise<void> {
    const position = await this.deps.inbox.record(deviceId, event, eventId);
    await this.deps.projections.settle(position);
  }

  /** The engine's chat operations, for a chat the device has (`404 chat_not_found` otherwise). */
  private chatOps(deviceId: string, chatId: string): ChatOperations {
    const connection = this.online(deviceId);
    if (!this.deps.index.hasChat(deviceId, chatId))
      throw new DomainError('chat_not_found', `the device has no chat ${chatId}`);
    return this.translated(deviceId, engineSupports(connection.chats, 'chat management'));
  }

  /** The engine's refusals in the API's words (`engine_error`, `session_not_online`), not an unknown error (500). */
  private translated(deviceId: string, ops: ChatOperations): ChatOperations {
    return translatingEngineFailures(ops, () => this.deps.sessionState?.(deviceId));
  }

  private messageOps(
    deviceId: string,
    waMessageId: string,
  ): { ops: ChatOperations; chatId: string; ref: ChatMessageRef } {
    const connection = this.online(deviceId);
    const found = this.deps.index.messageRef(deviceId, waMessageId);
    if (!found) throw new DomainError('message_not_found', `the device has no message ${waMessageId}`);
    const ops = this.translated(deviceId, engineSupports(connection.chats, 'chat management'));
    return { ops, chatId: found.chatId, ref: found.ref };
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

/** `muted` as recorded: null, "forever" or an ISO time. */
export function mutedUntilOf(muted: boolean | string): MutedUntil {
  if (muted === false) return null;
  if (muted === true) return 'forever';
  return new Date(muted).toISOString();
}

/** What the engine takes: epoch ms, Infinity for ever, null to unmute. */
function mutedUntilMsOf(mutedUntil: MutedUntil): number | null {
  if (mutedUntil === null) return null;
  return mutedUntil === 'forever' ? Number.POSITIVE_INFINITY : Date.parse(mutedUntil);
}
