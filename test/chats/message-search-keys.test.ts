/**
 * Search pages in the order of the search keys (src/chats/message-search-keys.ts): many matches newest first by
 * (time, log position), paged by cursor without a gap or a repeat, with late arrivals, history and texts that
 * come later (an edit) in their places, the same live and rebuilt; and a page read in the full-text index's own
 * order, so a word that half the messages hold costs a page, not all its matches (the query plan shows it).
 */
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { MessageIndex } from '../../src/chats/message-index.js';
import { searchBlockOf } from '../../src/chats/message-search-keys.js';
import type { PageKey } from '../../src/chats/message-views.js';
import type { InboxEvent } from '../../src/inbox/inbox-events.js';
import { readModelSpecification } from '../support/read-model-specification.js';

const spec = readModelSpecification<InboxEvent, MessageIndex>((db) => new MessageIndex(db));

const ALICE = '4915100000001';
const BOB = '4915100000002';
const T = 1_767_225_600;

/** The log as given: each event's position is its place in it (read-model-specification.ts numbers them so). */
class Log {
  readonly events: InboxEvent[] = [];
  /** The searchable messages: id → (time, position). */
  readonly matches = new Map<string, PageKey>();

  received(id: string, at: number, body: string, chatId = ALICE): InboxEvent {
    const event: InboxEvent = {
      type: 'MessageReceived',
      data: { deviceId: 'd1', from: chatId, chatId, type: 'text', body, timestamp: at, waMessageId: id },
    };
    return this.add(event, id, at, body);
  }

  imported(id: string, at: number, body: string): InboxEvent {
    const event: InboxEvent = {
      type: 'HistoryImported',
      data: {
        deviceId: 'd1',
        syncId: 's1',
        from: BOB,
        chatId: BOB,
        type: 'text',
        body,
        timestamp: at,
        waMessageId: id,
      },
    };
    return this.add(event, id, at, body);
  }

  edited(id: string, body: string): InboxEvent {
    this.events.push({
      type: 'MessageEdited',
      data: { deviceId: 'd1', chatId: ALICE, from: ALICE, fromMe: false, waMessageId: id, body, timestamp: T + 99 },
    });
    const at = this.at.get(id)!;
    if (body.includes('kiwi')) this.matches.set(id, { at, pos: this.pos.get(id)! });
    return this.events[this.events.length - 1];
  }

  /** The matches newest first, as pages must list them. */
  newestFirst(): string[] {
    return [...this.matches].sort(([, a], [, b]) => b.at - a.at || b.pos - a.pos).map(([id]) => id);
  }

  private readonly at = new Map<string, number>();
  private readonly pos = new Map<string, number>();

  private add(event: InboxEvent, id: string, at: number, body: string): InboxEvent {
    this.events.push(event);
    this.at.set(id, at);
    this.pos.set(id, this.events.length);
    if (body.includes('kiwi')) this.matches.set(id, { at, pos: this.events.length });
    return event;
  }
}

/** Every page of a search, following the cursors: the ids in the order shown. */
function allPages(index: MessageIndex, q: string, limit: number): string[] {
  const ids: string[] = [];
  let after: PageKey | undefined;
  for (let pages = 0; pages < 1_000; pages++) {
    const page = index.search('d1', q, { limit, ...(after ? { after } : {}) });
    ids.push(...page.items.map((m) => m.waMessageId));
    if (!page.next) return ids;
    after = page.next;
  }
  throw new Error('pages without end');
}

describe('search keys: the order of search pages', () => {
  it('pages many matches newest first by (time, position): late arrivals, history and late texts in their places, live and rebuilt', () => {
    const log = new Log();
    // Four messages a second, every third one without the word.
    const live = Array.from({ length: 40 }, (_, n) =>
      log.received(`L${n}`, T + Math.floor(n / 4), n % 3 === 2 ? `plain ${n}` : `kiwi ${n}`),
    );
    // Arriving late, in seconds that have keys already; an older one; history older still; an empty text that an
    // edit fills later, in a second whose later messages have keys by then (its block is numbered again).
    const late = [
      log.received('LATE1', T + 3, 'kiwi came late'),
      log.received('LATE2', T + 1, 'kiwi came later, older'),
      log.received('EMPTY', T + 20, ''),
      log.received('AFTER1', T + 20, 'kiwi after the empty one'),
      log.received('AFTER2', T + 20, 'kiwi after it too', BOB),
      ...Array.from({ length: 12 }, (_, n) => log.imported(`H${n}`, T - 1_000 + Math.floor(n / 3), `kiwi of old ${n}`)),
    ];
    const edit = log.edited('EMPTY', 'kiwi at last');
    const expected = log.newestFirst();
    expect(expected.length).toBeGreaterThan(40);

    spec
      .given(...live)
      .given(...late)
      .given(edit)
      .then((index) => allPages(index, 'kiwi', 7), expected)
      .then((index) => allPages(index, 'KIWI', 1), expected)
      .then((index) => index.search('d1', 'kiwi', { limit: 5 }).items.map((m) => m.waMessageId), expected.slice(0, 5))
      .then((index) => allPages(index, 'plain', 4).length, 13);
  });

  it("pages after a message that is gone from the search (revoked) still start after the message's place", () => {
    const log = new Log();
    const events = Array.from({ length: 12 }, (_, n) => log.received(`M${n}`, T + Math.floor(n / 3), `kiwi ${n}`));
    const expected = log.newestFirst();
    const revoke: InboxEvent = {
      type: 'MessageRevoked',
      data: { deviceId: 'd1', chatId: ALICE, from: ALICE, fromMe: false, waMessageId: expected[4], timestamp: T + 99 },
    };
    spec
      .given(...events)
      .given(revoke)
      .then((index) => {
        // The cursor a page ending at expected[4] gave before its message was revoked.
        const page = index.search('d1', 'kiwi', { limit: 50, after: log.matches.get(expected[4])! });
        return page.items.map((m) => m.waMessageId);
      }, expected.slice(5));
  });

  it("reads a page in the full-text index's order and stops at its end: no sort of every match", () => {
    const db = new Database(':memory:');
    try {
      const index = new MessageIndex(db);
      index.setup(db);
      const searches: string[] = [];
      const prepare = db.prepare.bind(db);
      vi.spyOn(db, 'prepare').mockImplementation((sql: string) => {
        if (sql.includes('MATCH')) searches.push(sql);
        return prepare(sql);
      });
      index.search('d1', 'kiwi', { limit: 50 });
      index.search('d1', 'kiwi', { limit: 50, chatId: ALICE, after: { at: T, pos: 10 } });
      // In one chat: the index's walk and the chat's (message-search-chat.ts).
      expect(searches).toHaveLength(3);
      const plans = searches.map((sql) => {
        const parameters = new Array<null>((sql.match(/\?/g) ?? []).length).fill(null);
        return (prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...parameters) as Array<{ detail: string }>).map(
          (step) => step.detail,
        );
      });
      // The matches come out of FTS5 in key order (descending), the loop the others hang on: nothing to sort.
      for (const plan of plans) expect(plan.join('\n')).not.toMatch(/TEMP B-TREE/);
      for (const plan of plans.slice(0, 2))
        expect(plan.find((step) => step.startsWith('SCAN'))).toMatch(
          /^SCAN (f|chat_messages_search) VIRTUAL TABLE INDEX 1\d\d:M/,
        );
      // The chat's messages newest first by its index, each looked up in FTS5 by its key.
      expect(plans[2][0]).toMatch(/^SEARCH m USING INDEX chat_messages_by_chat/);
      expect(plans[2].join('\n')).toMatch(/SCAN f VIRTUAL TABLE INDEX 0:=M/);
    } finally {
      db.close();
    }
  });

  it('orders times out of range by their range end, and a fraction of a second by position, live and rebuilt alike', () => {
    const log = new Log();
    const odd = [T + 0.9, T, T + 0.2, 0.5, 0, 1e15, 1e15 + 7, 2 ** 33 - 1].map((at, n) =>
      log.received(`O${n}`, at, 'kiwi'),
    );
    const byKey = [...log.matches]
      .sort(([, a], [, b]) => searchBlockOf(b.at) - searchBlockOf(a.at) || b.pos - a.pos)
      .map(([id]) => id);
    spec.given(...odd).then((index) => allPages(index, 'kiwi', 3), byKey);
  });

  it('keeps keys in safe integers: times out of range are taken as the range ends, fractions cut', () => {
    expect(searchBlockOf(T + 0.7)).toBe(T);
    expect(searchBlockOf(-5)).toBe(0);
    expect(searchBlockOf(Number.POSITIVE_INFINITY)).toBe(2 ** 33 - 1);
    expect(searchBlockOf(Number.NaN)).toBe(0);
    expect(searchBlockOf(1e15)).toBe(2 ** 33 - 1);
    expect(Number.isSafeInteger((2 ** 33 - 1) * 2 ** 20 + 2 ** 20 - 1)).toBe(true);
  });
});
