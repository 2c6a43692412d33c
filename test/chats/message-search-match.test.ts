/**
 * A search's words as FTS5 is asked them (src/chats/message-search-match.ts): a word FTS5 would answer by merging
 * the hits of every term it starts (1 character, 4 or more) is asked as those terms, each walked in key order, with
 * the same hits as the prefix; a page after a cursor gives FTS5 its bound as an integer (it seeks to it, where it
 * walks every hit before a bound given otherwise).
 */
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import type { MessageIndex } from '../../src/chats/message-index.js';
import { emptyMessageIndex } from './support/empty-message-index.js';
import { MAX_TERMS } from '../../src/chats/message-search-match.js';
import type { StoredEvent } from '../../src/eventstore/event-store.js';

const T = 1_767_225_600;

const TEXTS = [
  'bicolide bicofe',
  'Bicome bico',
  'biçoza ba',
  'bic b',
  'bé be bo',
  'order 4711 shipped',
  'bicolide',
  'café au lait',
  'foo_bar baz',
  'Ünïcode ünd',
  'bicolide bicolide ba',
  'zebra',
];

/** A message index on a new in-memory database, with one received message per text (a second apart). */
function indexOf(texts: readonly string[]): { db: Database.Database; index: MessageIndex } {
  const { db, index } = emptyMessageIndex();
  db.transaction(() => {
    texts.forEach((body, n) => {
      const event: StoredEvent = {
        id: `event-${n + 1}`,
        streamId: 'spec',
        revision: n,
        position: n + 1,
        type: 'MessageReceived',
        data: { deviceId: 'd1', from: '4915100000001', chatId: '4915100000001', type: 'text', body, timestamp: T + n },
        metadata: {},
        createdAt: new Date((T + n) * 1_000),
      };
      (event.data as { waMessageId: string }).waMessageId = `M${n}`;
      index.apply(event);
    });
    index.flush();
  })();
  return { db, index };
}

/** What FTS5 answers for every word as a prefix (the contract), newest first: the ids of the messages. */
function asPrefixes(db: Database.Database, q: string): string[] {
  const words = q.match(/[\p{L}\p{N}_]+/gu) ?? [];
  return db
    .prepare(
      `SELECT m.wa_message_id FROM chat_messages_search f JOIN chat_messages_search_keys k ON k.key = f.rowid
       JOIN chat_messages m ON m.pos = k.pos WHERE chat_messages_search MATCH ? ORDER BY f.rowid DESC`,
    )
    .pluck()
    .all(words.map((word) => `"${word}"*`).join(' ')) as string[];
}

/** The MATCH expressions and the page bounds the search statements are run with. */
function recordSearches(db: Database.Database): Array<readonly unknown[]> {
  const runs: Array<readonly unknown[]> = [];
  const prepare = db.prepare.bind(db);
  vi.spyOn(db, 'prepare').mockImplementation((sql: string) => {
    const statement = prepare(sql);
    if (!sql.includes('hit_key')) return statement;
    const all = statement.all.bind(statement);
    statement.all = (...args: unknown[]) => {
      runs.push(args);
      return all(...args);
    };
    return statement;
  });
  return runs;
}

const QUERIES = ['bico', 'BICO', 'b', 'B', 'bi', 'bic', 'bicolide', 'bicol', 'bico ba', '4', '47', '4711', 'caf'];
const MORE = ['café', 'unico', 'ünd', 'foo_bar', 'zebra', 'z', 'q', 'nothing', 'bicolidex'];

describe('search words as FTS5 is asked them', () => {
  it('finds what every word as a prefix finds, in the same order', () => {
    const { db, index } = indexOf(TEXTS);
    try {
      for (const q of [...QUERIES, ...MORE]) {
        const expected = asPrefixes(db, q);
        const found = index.search('d1', q, { limit: 100 }).items.map((m) => m.waMessageId);
        expect(found, q).toEqual(expected);
      }
      expect(asPrefixes(db, 'bico')).toHaveLength(5);
    } finally {
      db.close();
    }
  });

  it('asks a word of 1 or of 4 and more characters as the terms it starts, not as a prefix FTS5 merges', () => {
    const { db, index } = indexOf(TEXTS);
    try {
      const runs = recordSearches(db);
      index.search('d1', 'bico', { limit: 10 });
      index.search('d1', 'B', { limit: 10 });
      index.search('d1', 'bi bicolide', { limit: 10 });
      const matches = runs.map((args) => String(args[0]));
      expect(matches).toEqual([
        '("bico" OR "bicofe" OR "bicolide" OR "bicome" OR "bicoza")',
        '("b" OR "ba"* OR "be"* OR "bi"* OR "bo"*)',
        '"bi"* AND "bicolide"',
      ]);
    } finally {
      db.close();
    }
  });

  it('asks a word with more terms than it looks up as a prefix, and finds the same', () => {
    const many = Array.from({ length: MAX_TERMS + 5 }, (_, n) => `kiwi${n} fruit`);
    const { db, index } = indexOf(many);
    try {
      const runs = recordSearches(db);
      const found = index.search('d1', 'kiwi', { limit: 100 }).items.map((m) => m.waMessageId);
      expect(found).toEqual(asPrefixes(db, 'kiwi'));
      expect(found).toHaveLength(MAX_TERMS + 5);
      expect(runs.map((args) => args[0])).toEqual(['"kiwi"*']);
    } finally {
      db.close();
    }
  });

  it('gives FTS5 the bound of a page after a cursor as an integer, and pages on without gap or repeat', () => {
    const texts = Array.from({ length: 30 }, (_, n) => `bicolide ${n}`);
    const { db, index } = indexOf(texts);
    try {
      const runs = recordSearches(db);
      const seen: string[] = [];
      let page = index.search('d1', 'bicolide', { limit: 7 });
      seen.push(...page.items.map((m) => m.waMessageId));
      while (page.next) {
        page = index.search('d1', 'bicolide', { limit: 7, after: page.next });
        seen.push(...page.items.map((m) => m.waMessageId));
      }
      expect(seen).toEqual(asPrefixes(db, 'bicolide'));
      const bounds = runs.slice(1).map((args) => typeof args[args.length - 1]);
      expect(bounds).toEqual(['bigint', 'bigint', 'bigint', 'bigint']);
    } finally {
      db.close();
    }
  });
});
