/** Label commands against the real inbox writer on a SQLite store, with an engine connection that only answers. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LabelCommands, nextLabelId } from '../../src/chats/label-commands.js';
import type { ChatView } from '../../src/chats/message-views.js';
import { type EngineConnection, EngineError, type LabelOperations } from '../../src/engines/engine.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { InboxCommands } from '../../src/inbox/inbox-commands.js';
import { tempDir } from '../support/temp-dir.js';

const CHAT = '4915111111111';

describe('label commands', () => {
  it('records nothing when the network refuses the change (made there first), and its refusal is engine_error', async () => {
    const store = new SqliteEventStore(join(tempDir('dmg-label-commands-'), 'events.sqlite'));
    const inbox = new InboxCommands(store);
    let refuse = true;
    const labels: LabelOperations = {
      isBusiness: () => true,
      edit: async () => {
        if (refuse) throw new EngineError('engine_error', 'app state conflict');
      },
      labelChat: async () => {
        if (refuse) throw new EngineError('engine_error', 'app state conflict');
      },
    };
    const commands = new LabelCommands({
      inbox,
      index: {
        labels: () => [{ labelId: '1', name: 'Paid', color: 0 }],
        labelIds: () => ['1'],
        hasChat: () => true,
        chat: () => undefined,
        chats: () => ({ items: [], next: null }),
      },
      connection: () => ({ labels }) as unknown as EngineConnection,
      projections: { waitFor: async () => {}, settle: async () => true },
    });
    try {
      await expect(commands.create('dev', { name: 'New' })).rejects.toMatchObject({ code: 'engine_error' });
      await expect(commands.update('dev', '1', { color: 4 })).rejects.toMatchObject({ code: 'engine_error' });
      await expect(commands.labelChat('dev', CHAT, '1', 'add')).rejects.toMatchObject({ code: 'engine_error' });
      expect(await store.readStream('inbox-dev')).toEqual([]);

      // A refused creation does not hold the next one up.
      refuse = false;
      expect(await commands.create('dev', { name: 'New' })).toEqual({ labelId: '2', name: 'New', color: 0 });
      expect((await store.readStream('inbox-dev')).map((e) => [e.type, e.data])).toEqual([
        ['LabelUpdated', { deviceId: 'dev', labelId: '2', name: 'New', color: 0, deleted: false }],
      ]);
    } finally {
      await store.close();
    }
  });

  it('makes and records nothing when the chat already is as asked (no second chat.labels)', async () => {
    const store = new SqliteEventStore(join(tempDir('dmg-label-commands-'), 'events.sqlite'));
    const made: string[] = [];
    const labels: LabelOperations = {
      isBusiness: () => true,
      edit: async () => {},
      labelChat: async (chatId, labelId, action) => {
        made.push(`${action} ${labelId} ${chatId}`);
      },
    };
    const commands = new LabelCommands({
      inbox: new InboxCommands(store),
      index: {
        labels: () => [
          { labelId: '1', name: 'Paid', color: 0 },
          { labelId: '2', name: 'Lead', color: 1 },
        ],
        labelIds: () => ['1', '2'],
        hasChat: () => true,
        chat: () => ({ labels: ['1'] }) as unknown as ChatView,
        chats: () => ({ items: [], next: null }),
      },
      connection: () => ({ labels }) as unknown as EngineConnection,
      projections: { waitFor: async () => {}, settle: async () => true },
    });
    try {
      await commands.labelChat('dev', CHAT, '1', 'add');
      await commands.labelChat('dev', CHAT, '2', 'remove');
      expect(made).toEqual([]);
      expect(await store.readStream('inbox-dev')).toEqual([]);
      await commands.labelChat('dev', CHAT, '2', 'add');
      await commands.labelChat('dev', CHAT, '1', 'remove');
      expect(made).toEqual([`add 2 ${CHAT}`, `remove 1 ${CHAT}`]);
      expect((await store.readStream('inbox-dev')).map((e) => e.type)).toEqual([
        'ChatLabelChanged',
        'ChatLabelChanged',
      ]);
    } finally {
      await store.close();
    }
  });

  it('gives a new label the number after the highest id the account ever had', () => {
    expect(nextLabelId([])).toBe('1');
    expect(nextLabelId(['1', '5', '12', 'custom'])).toBe('13');
  });
});
