/**
 * The message index's heavy reads on a reader thread (src/chats/message-index-reads.ts, its thread entry and
 * src/storage/reader-threads.ts): a chat's pages a thread answers are the main thread's, text for text, and a thread
 * reads what the projection committed before the call (read your writes).
 */
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { MessageIndex } from '../../src/chats/message-index.js';
import { MESSAGE_INDEX_READER_ENTRY, messageIndexReads } from '../../src/chats/message-index-reads.js';
import { backgroundCheckpoints } from '../../src/eventstore/sqlite/background-checkpoints.js';
import type { StoredEvent } from '../../src/eventstore/event-store.js';
import { READ_MODEL_FILE, openReadModelDb } from '../../src/projections/read-model-db.js';
import { ReaderThreads } from '../../src/storage/reader-threads.js';
import { tempDir } from '../support/temp-dir.js';

const T = 1_767_225_600;
const CHATS = ['4915100000001', '4915100000002', '120363000000000001@g.us'];

function setUp() {
  const dir = tempDir('dmg-message-reads-');
  const db = openReadModelDb(dir);
  const index = new MessageIndex(db);
  db.transaction(() => {
    index.setup(db);
    index.reset(db);
  })();
  index.caughtUp?.();
  let position = 0;
  /** Received messages, projected and committed as the runner does (one batch). */
  const receive = (count: number) => {
    const events: StoredEvent[] = Array.from({ length: count }, () => {
      position++;
      const chatId = CHATS[position % CHATS.length];
      const group = chatId.endsWith('@g.us');
      return {
        id: `event-${position}`,
        streamId: 'inbox-d1',
        revision: position - 1,
        position,
        type: 'MessageReceived',
        data: {
          deviceId: 'd1',
          from: group ? CHATS[0] : chatId,
          chatId,
          ...(group ? { isGroup: true, participant: CHATS[0] } : {}),
          type: 'text',
          body: `message ${position}: "quoted" \\ é 😀`,
          timestamp: T + Math.floor(position / 2),
          waMessageId: `M${position}`,
        },
        metadata: {},
        createdAt: new Date((T + position) * 1000),
      };
    });
    db.transaction(() => {
      for (const event of events) index.apply(event);
      index.flush?.();
    })();
  };
  const local = messageIndexReads(index);
  const readers = new ReaderThreads({ entry: MESSAGE_INDEX_READER_ENTRY, file: db.name, threads: 1, local });
  onTestFinished(async () => {
    await readers.close();
    db.close();
    await backgroundCheckpoints.add(join(dir, READ_MODEL_FILE)).release();
  });
  return { readers, local, receive };
}

describe('message index reads on a reader thread', () => {
  it('answer every page of a chat as the main thread does', async () => {
    const { readers, local, receive } = setUp();
    receive(120);
    await readers.ready();
    expect(readers.readyThreads).toBe(1);
    for (const chatId of CHATS)
      for (const phone of [undefined, '4915199999999']) {
        let after: { at: number; pos: number } | undefined;
        let pages = 0;
        do {
          const options = { limit: 7, phone, ...(after ? { after } : {}) };
          const page = await readers.run('messagesJson', 'd1', chatId, options);
          expect(page).toEqual(local.messagesJson('d1', chatId, options));
          after = page.next ?? undefined;
          pages++;
        } while (after);
        expect(pages).toBe(Math.ceil(40 / 7));
      }
    expect(readers.answered.local).toBe(0);
  });

  it('read what the projection committed before the call', async () => {
    const { readers, receive } = setUp();
    receive(3);
    await readers.ready();
    const before = await readers.run('messagesJson', 'd1', CHATS[1], { limit: 50, phone: undefined });
    receive(3);
    const after = await readers.run('messagesJson', 'd1', CHATS[1], { limit: 50, phone: undefined });
    expect((JSON.parse(after.items) as unknown[]).length).toBe((JSON.parse(before.items) as unknown[]).length + 1);
    expect(readers.answered).toEqual({ thread: 2, local: 0 });
  });
});
