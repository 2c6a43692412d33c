/** Chat commands against the real inbox writer on a SQLite store, with an engine connection that only answers. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChatCommands } from '../../src/chats/chat-commands.js';
import type { EngineConnection } from '../../src/engines/engine.js';
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
});
