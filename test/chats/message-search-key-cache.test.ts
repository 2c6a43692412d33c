/**
 * The search keys' highest key kept in memory (src/chats/message-search-keys.ts): a message recorded now gets its
 * key without a look-up of its second's keys, and the keys stay right after a rollback, and when another
 * connection wrote keys meanwhile (it is no longer known then).
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MessageIndex } from '../../src/chats/message-index.js';
import type { StoredEvent } from '../../src/eventstore/event-store.js';
import type { InboxEvent } from '../../src/inbox/inbox-events.js';
import { readModelSpecification } from '../support/read-model-specification.js';
import { tempDir } from '../support/temp-dir.js';

const ALICE = '4915100000001';
const T = 1_767_225_600;

const received = (id: string, at: number, body: string): InboxEvent => ({
  type: 'MessageReceived',
  data: { deviceId: 'd1', from: ALICE, chatId: ALICE, type: 'text', body, timestamp: at, waMessageId: id },
});

/** Counts the reads of chat_messages_search_keys by statements `db` prepares from now on. */
function countKeyReads(db: Database.Database): { reads: number } {
  const counter = { reads: 0 };
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    const statement = prepare(sql);
    if (!/^\s*SELECT/i.test(sql) || !sql.includes('chat_messages_search_keys') || sql.includes('MATCH'))
      return statement;
    for (const method of ['get', 'all', 'iterate'] as const) {
      const run = statement[method].bind(statement) as (...args: unknown[]) => unknown;
      (statement as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        counter.reads++;
        return run(...args);
      };
    }
    return statement;
  }) as typeof db.prepare;
  return counter;
}

const ids = (index: MessageIndex, q = 'kiwi') =>
  index.search('d1', q, { limit: 1_000 }).items.map((m) => m.waMessageId);

describe('search keys kept in memory', () => {
  it("gives messages recorded now their keys without reading their second's keys", () => {
    const counters: Array<{ reads: number }> = [];
    const spec = readModelSpecification<InboxEvent, MessageIndex>((db) => {
      counters.push(countKeyReads(db));
      return new MessageIndex(db);
    });
    // Five messages a second over ten seconds, in batches of seven.
    const events = Array.from({ length: 50 }, (_, n) => received(`M${n}`, T + Math.floor(n / 5), `kiwi ${n}`));
    let chain = spec.given(...events.slice(0, 7));
    for (let from = 7; from < events.length; from += 7) chain = chain.given(...events.slice(from, from + 7));
    const expected = events.map((_, n) => `M${n}`).reverse();
    chain.then((index) => ids(index), expected);
    // The live read model (made first): the highest key read once, at its first message.
    expect(counters[0].reads).toBeLessThanOrEqual(1);
  });

  it('gives keys in order again after a batch rolled back, and after an older message and an edit', () => {
    const spec = readModelSpecification<InboxEvent, MessageIndex>((db) => new MessageIndex(db));
    const edit: InboxEvent = {
      type: 'MessageEdited',
      data: { deviceId: 'd1', chatId: ALICE, from: ALICE, fromMe: false, waMessageId: 'E', body: 'kiwi', timestamp: T },
    };
    spec
      .given(received('A', T, 'kiwi a'), received('B', T + 1, 'kiwi b'))
      .givenRetried(received('C', T + 1, 'kiwi c'), received('D', T + 2, 'kiwi d'))
      .given(received('OLD', T - 5, 'kiwi old'), received('E', T + 2, 'empty'))
      .given(received('F', T + 2, 'kiwi f'), edit)
      .given(received('G', T + 2, 'kiwi g'))
      .then((index) => ids(index), ['G', 'F', 'E', 'D', 'C', 'B', 'A', 'OLD']);
  });

  it('reads the keys again when another connection wrote some: none given twice, pages in order', () => {
    const file = join(tempDir('dmg-search-keys-'), 'read-models.db');
    const connections = [new Database(file), new Database(file)];
    try {
      for (const db of connections) db.pragma('journal_mode = WAL');
      const indexes = connections.map((db) => new MessageIndex(db));
      connections[0].transaction(() => {
        indexes[0].setup(connections[0]);
        indexes[0].reset(connections[0]);
      })();
      indexes[0].caughtUp();
      indexes[1].setup(connections[1]);
      let position = 0;
      const apply = (writer: number, event: InboxEvent) => {
        position++;
        const stored: StoredEvent = {
          ...event,
          id: `event-${position}`,
          streamId: 'spec',
          revision: position - 1,
          position,
          metadata: {},
          createdAt: new Date(T * 1_000),
        };
        const db = connections[writer];
        db.transaction(() => {
          indexes[writer].apply(stored);
          indexes[writer].flush();
        })();
      };
      // Both write into the same seconds in turn: each must see the other's keys.
      for (let n = 0; n < 12; n++) apply(n % 3 === 0 ? 1 : 0, received(`M${n}`, T + Math.floor(n / 4), `kiwi ${n}`));
      const expected = Array.from({ length: 12 }, (_, n) => `M${n}`).reverse();
      expect(ids(indexes[0])).toEqual(expected);
      expect(ids(indexes[1])).toEqual(expected);
    } finally {
      for (const db of connections) db.close();
    }
  });
});
