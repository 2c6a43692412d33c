/** Chat commands against the real inbox writer on a SQLite store, with an engine connection that only answers. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChatCommands } from '../../src/chats/chat-commands.js';
import { type EngineConnection, EngineError } from '../../src/engines/engine.js';
import { DomainError } from '../../src/errors/domain-error.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { InboxCommands } from '../../src/inbox/inbox-commands.js';
import { tempDir } from '../support/temp-dir.js';

const CHAT = '4915111111111';
const ref = { waMessageId: 'M1', fromMe: false, timestamp: 1_700_000_000 };

describe('chat commands', () => {
  it("records a deletion for me once when the engine reported it first (the engine's echo shares its event id)", async () => {
    const store = new SqliteEventStore(join(tempDir('dmg-chat-commands-'), 'events.sqlite'));
    const inbox = new InboxCommands(store);
    const connection = {
      chats: { modify: async () => {}, star: async () => {}, pin: async () => {}, deleteForMe: async () => {} },
    } as unknown as EngineConnection;
    const commands = new ChatCommands({
      inbox,
      index: {
        unread: () => [],
        participantOf: () => undefined,
        hasChat: () => true,
        lastMessageOf: () => undefined,
        oldestMessageOf: () => undefined,
        messageRef: () => ({ chatId: CHAT, ref }),
      },
      connection: () => connection,
      projections: { waitFor: async () => {}, settle: async () => true },
    });
    try {
      // Baileys emits the deletion it applied locally while deleting: the engine's report comes first.
      await inbox.activity('dev', { kind: 'message_deleted', chatId: CHAT, waMessageId: 'M1' });
      await commands.deleteForMe('dev', 'M1');
      const types = (await store.readStream('inbox-dev')).map((e) => e.type);
      expect(types).toEqual(['MessageDeleted']);
    } finally {
      await store.close();
    }
  });

  it("answers the network's refusal of a chat change as engine_error (502), never as an unknown error (500)", async () => {
    const store = new SqliteEventStore(join(tempDir('dmg-chat-commands-'), 'events.sqlite'));
    const refuse = async () => {
      throw new EngineError('engine_error', 'changing the chat: the server said no');
    };
    const connection = {
      chats: { modify: refuse, star: refuse, pin: refuse, deleteForMe: refuse, fetchHistory: refuse },
    } as unknown as EngineConnection;
    const commands = new ChatCommands({
      inbox: new InboxCommands(store),
      index: {
        unread: () => [],
        participantOf: () => undefined,
        hasChat: () => true,
        lastMessageOf: () => undefined,
        oldestMessageOf: () => ref,
        messageRef: () => ({ chatId: CHAT, ref }),
      },
      connection: () => connection,
      sessionState: () => 'online',
      projections: { waitFor: async () => {}, settle: async () => true },
    });
    const codeOf = (promise: Promise<unknown>) =>
      promise.then(
        () => 'resolved',
        (error: unknown) => (error instanceof DomainError ? error.code : `not a DomainError: ${String(error)}`),
      );
    try {
      expect(await codeOf(commands.modify('dev', CHAT, { archived: true }))).toBe('engine_error');
      expect(await codeOf(commands.remove('dev', CHAT, true))).toBe('engine_error');
      expect(await codeOf(commands.star('dev', 'M1', true))).toBe('engine_error');
      expect(await codeOf(commands.fetchHistory('dev', CHAT, 10))).toBe('engine_error');
      expect(await store.readStream('inbox-dev')).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
