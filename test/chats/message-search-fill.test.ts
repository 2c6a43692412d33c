/** A rebuild's fill of the search index (fillSearchTable, src/chats/message-index-schema.ts). */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SEARCH_TEXT_FUNCTION, fillSearchTable } from '../../src/chats/message-index-schema.js';
import { MessageIndex } from '../../src/chats/message-index.js';
import { fillSearchKeys } from '../../src/chats/message-search-keys.js';

const MESSAGES = 20_000;

/** A database with the message index's tables and MESSAGES messages of eight words each, from many words. */
function withMessages(): Database.Database {
  const db = new Database(':memory:');
  new MessageIndex(db).setup(db);
  const insert = db.prepare(
    `INSERT INTO chat_messages (device_id, wa_message_id, chat_id, from_me, sender, type, body, at, pos)
     VALUES ('d1', ?, '4915100000001', 0, '4915100000001', 'text', ?, ?, ?)`,
  );
  db.transaction(() => {
    for (let pos = 1; pos <= MESSAGES; pos++) {
      const words = Array.from({ length: 8 }, (_, w) => `w${((pos * 7919 + w * 104729) % 30_011).toString(36)}`);
      insert.run(`M${pos}`, words.join(' '), 1_790_000_000 + Math.floor(pos / 10), pos);
    }
  })();
  db.exec('DELETE FROM chat_messages_search; DELETE FROM chat_messages_search_keys');
  return db;
}

const answers = (db: Database.Database) =>
  ['w1*', 'wa', 'w2b*', 'wz*', 'w1 w2*', 'nothing'].map((query) =>
    db
      .prepare('SELECT rowid FROM chat_messages_search WHERE chat_messages_search MATCH ? ORDER BY rowid DESC')
      .pluck()
      .all(query),
  );
/** The segments FTS5 wrote (each flush of its pending terms is one, and merges make more). */
const segments = (db: Database.Database) =>
  db.prepare('SELECT count(DISTINCT segid) FROM chat_messages_search_idx').pluck().get() as number;
const config = (db: Database.Database) => db.prepare('SELECT k, v FROM chat_messages_search_config ORDER BY k').all();

describe("a rebuild's fill of the search index", () => {
  it('writes fewer segments than FTS5 does by default, answers the same, and leaves the default for live batches', () => {
    const filled = withMessages();
    const plain = withMessages();
    try {
      filled.transaction(() => fillSearchTable(filled))();
      // The fill as FTS5 does it by default (1 MiB of pending terms per segment).
      plain.transaction(() => {
        const text = `${SEARCH_TEXT_FUNCTION}(type, body, media, content, revoked, deleted)`;
        fillSearchKeys(plain, text);
        plain.exec(`INSERT INTO chat_messages_search (rowid, text)
          SELECT k.key, ${text} FROM chat_messages_search_keys k JOIN chat_messages m ON m.pos = k.pos ORDER BY k.key`);
      })();
      expect(answers(filled)).toEqual(answers(plain));
      expect(answers(filled)[0].length).toBeGreaterThan(1_000);
      expect(segments(filled)).toBeLessThan(segments(plain) / 2);
      expect(config(filled)).toEqual([
        { k: 'hashsize', v: 1024 * 1024 },
        { k: 'version', v: 4 },
      ]);
    } finally {
      filled.close();
      plain.close();
    }
  });

  it('indexes what searchTextOf makes of each message: bodies, file names of media and sent documents, no reactions, revoked or deleted', () => {
    const db = new Database(':memory:');
    try {
      new MessageIndex(db).setup(db);
      const insert = db.prepare(
        `INSERT INTO chat_messages (device_id, wa_message_id, chat_id, from_me, sender, type, body, at, pos, media, content, revoked, deleted)
         VALUES ('d1', ?, '4915100000001', 0, '4915100000001', ?, ?, 1790000000, ?, ?, ?, ?, ?)`,
      );
      const rows: Array<[string, string, string | null, string | null, number, number]> = [
        ['text', 'alpha words', null, null, 0, 0],
        ['image', '', JSON.stringify({ status: 'ready', filename: 'report.pdf' }), null, 0, 0],
        [
          'document',
          'see attached',
          null,
          JSON.stringify({ kind: 'document', media: { filename: 'invoice.pdf' } }),
          0,
          0,
        ],
        ['reaction', 'thumbs', null, null, 0, 0],
        ['text', 'revoked words', null, null, 1, 0],
        ['text', 'deleted words', null, null, 0, 1],
        ['text', 'gamma', null, JSON.stringify({ kind: 'text', text: 'gamma' }), 0, 0],
        ['image', 'caption only', JSON.stringify({ status: 'ready' }), null, 0, 0],
      ];
      rows.forEach(([type, body, media, content, revoked, deleted], i) =>
        insert.run(`M${i + 1}`, type, body, i + 1, media, content, revoked, deleted),
      );
      db.exec('DELETE FROM chat_messages_search; DELETE FROM chat_messages_search_keys');
      fillSearchTable(db);
      const found = (query: string) =>
        db
          .prepare(
            `SELECT k.pos FROM chat_messages_search s JOIN chat_messages_search_keys k ON k.key = s.rowid
             WHERE chat_messages_search MATCH ? ORDER BY k.pos`,
          )
          .pluck()
          .all(query);
      expect(db.prepare('SELECT pos FROM chat_messages_search_keys ORDER BY pos').pluck().all()).toEqual([
        1, 2, 3, 7, 8,
      ]);
      expect(found('alpha')).toEqual([1]);
      expect(found('report')).toEqual([2]);
      expect(found('invoice')).toEqual([3]);
      expect(found('attached')).toEqual([3]);
      expect(found('words')).toEqual([1]);
      expect(found('thumbs')).toEqual([]);
      expect(found('gamma')).toEqual([7]);
      expect(found('caption')).toEqual([8]);
    } finally {
      db.close();
    }
  });
});
