/** The message index's search part (src/chats/message-search-index.ts): filled once, not at every start. */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MessageIndex } from '../../src/chats/message-index.js';

const insertMessage = (db: Database.Database, pos: number, body: string) =>
  db
    .prepare(
      `INSERT INTO chat_messages (device_id, wa_message_id, chat_id, from_me, sender, type, body, at, pos)
       VALUES ('d1', ?, '4915100000001', 0, '4915100000001', 'text', ?, 1, ?)`,
    )
    .run(`M${pos}`, body, pos);

describe('message search index', () => {
  it('is filled at start only when it never was, not whenever it is empty (no message had text)', () => {
    const db = new Database(':memory:');
    try {
      const first = new MessageIndex(db);
      first.setup(db);
      // Messages without text leave the index empty; a start after that has nothing to fill.
      insertMessage(db, 1, '');
      const restarted = new MessageIndex(db);
      restarted.setup(db);
      // A row the index did not note (written behind its back) shows whether a start refilled it.
      insertMessage(db, 2, 'hello');
      new MessageIndex(db).setup(db);
      expect(restarted.search('d1', 'hello', { limit: 10 }).items).toEqual([]);
    } finally {
      db.close();
    }
  });

  it('fills an index a rebuild left unfilled (the process died before it caught up)', () => {
    const db = new Database(':memory:');
    try {
      const index = new MessageIndex(db);
      index.setup(db);
      index.reset(db);
      insertMessage(db, 1, 'hello');
      // No caughtUp: the next start fills it.
      const restarted = new MessageIndex(db);
      restarted.setup(db);
      expect(restarted.search('d1', 'hello', { limit: 10 }).items.map((m) => m.waMessageId)).toEqual(['M1']);
    } finally {
      db.close();
    }
  });

  it('indexes 2- and 3-character prefixes, and makes a table from before them again, filled', () => {
    const db = new Database(':memory:');
    try {
      db.exec(`CREATE VIRTUAL TABLE chat_messages_search USING fts5(
        text, content = '', contentless_delete = 1, tokenize = "unicode61 remove_diacritics 2")`);
      db.exec(
        'CREATE TABLE chat_messages_search_state (filled INTEGER NOT NULL); INSERT INTO chat_messages_search_state VALUES (1)',
      );
      const index = new MessageIndex(db);
      index.setup(db);
      insertMessage(db, 1, 'hello');
      new MessageIndex(db).setup(db);
      const made = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'chat_messages_search'").pluck().get();
      expect(made).toContain("prefix = '2 3'");
    } finally {
      db.close();
    }
  });
});
