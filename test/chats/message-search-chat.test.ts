/**
 * A search in one chat (src/chats/message-search-chat.ts): the same hits, in the same order and pages, as a search
 * of every chat keeps of that chat, whichever walk answers (a common word in a small chat: the chat's messages; a
 * rare word in a large chat: the index's hits), with times out of order, fractions of a second and a cleared chat.
 */
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import type { MessageIndex } from '../../src/chats/message-index.js';
import { emptyMessageIndex } from './support/empty-message-index.js';
import type { PageKey } from '../../src/chats/message-views.js';
import type { StoredEvent } from '../../src/eventstore/event-store.js';

const T = 1_767_225_600;
const BIG = '4915100000001';
const SMALL = '4915100000002';
const OTHER = '4915100000003';

type Given = { chatId: string; at: number; body: string } | { cleared: string };

/** A message index on a new in-memory database, fed `given` in one batch (message ids M0, M1…). */
function indexOf(given: readonly Given[]): { db: Database.Database; index: MessageIndex } {
  const { db, index } = emptyMessageIndex();
  db.transaction(() => {
    given.forEach((g, n) => {
      const [type, data] =
        'cleared' in g
          ? ['ChatDeleted', { deviceId: 'd1', chatId: g.cleared, cleared: true }]
          : [
              'MessageReceived',
              { deviceId: 'd1', from: g.chatId, chatId: g.chatId, type: 'text', body: g.body, timestamp: g.at },
            ];
      if (type === 'MessageReceived') (data as unknown as { waMessageId: string }).waMessageId = `M${n}`;
      const event: StoredEvent = {
        id: `event-${n + 1}`,
        streamId: 'spec',
        revision: n,
        position: n + 1,
        type,
        data,
        metadata: {},
        createdAt: new Date(T * 1_000),
      };
      index.apply(event);
    });
    index.flush();
  })();
  return { db, index };
}

/** Every page of a search, following the cursors. */
function allPages(index: MessageIndex, q: string, limit: number, chatId?: string): Array<[string, string]> {
  const found: Array<[string, string]> = [];
  let after: PageKey | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = index.search('d1', q, { limit, ...(chatId ? { chatId } : {}), ...(after ? { after } : {}) });
    found.push(...page.items.map((m): [string, string] => [m.waMessageId, m.chatId]));
    if (!page.next) return found;
    after = page.next;
  }
  throw new Error('pages without end');
}

/** The log: a large chat, a small one whose messages are the oldest, another; a common and a rare word. */
function log(): Given[] {
  const given: Given[] = [];
  for (let n = 0; n < 5_000; n++) {
    // Four messages a second, some a fraction into it, some arriving late (an older time).
    const at = T + Math.floor(n / 4) + (n % 5 === 1 ? 0.5 : 0) - (n % 97 === 0 ? 30 : 0);
    const chatId = n < 3 ? SMALL : n % 7 === 0 ? OTHER : BIG;
    const rare = chatId === BIG && n % 1_000 === 9;
    given.push({ chatId, at, body: `kiwi ${rare ? 'quince' : 'plain'} ${n}` });
    if (n === 2_500) given.push({ cleared: OTHER });
  }
  return given;
}

describe('search in one chat', () => {
  it('finds what a search of every chat finds of the chat, page by page, whichever walk answers', () => {
    const { db, index } = indexOf(log());
    try {
      for (const [q, chatId, limit] of [
        ['kiwi', SMALL, 2],
        ['quince', BIG, 3],
        ['kiwi', BIG, 70],
        ['kiwi', OTHER, 70],
        ['plain quin', BIG, 7],
        ['nothing', BIG, 7],
      ] as const) {
        const everywhere = allPages(index, q, 1_000).filter(([, chat]) => chat === chatId);
        expect(allPages(index, q, limit, chatId), `${q} in ${chatId}`).toEqual(everywhere);
      }
      expect(allPages(index, 'kiwi', 50, SMALL)).toHaveLength(3);
      expect(allPages(index, 'quince', 50, BIG)).toHaveLength(4);
      // Cleared at the 2,501st event: the chat's later messages only.
      expect(allPages(index, 'kiwi', 50, OTHER).length).toBeLessThan(400);
    } finally {
      db.close();
    }
  });

  it("asks the index about a small chat's messages instead of walking every chat's hits of a common word", () => {
    const { db, index } = indexOf(log());
    try {
      const walks: string[] = [];
      const prepare = db.prepare.bind(db);
      vi.spyOn(db, 'prepare').mockImplementation((sql: string) => {
        const statement = prepare(sql);
        if (!sql.includes('MATCH')) return statement;
        const all = statement.all.bind(statement);
        statement.all = (...args: unknown[]) => {
          const rows = all(...args);
          walks.push(`${sql.includes('EXISTS') ? 'chat' : 'index'}: ${rows.length}`);
          return rows;
        };
        return statement;
      });
      expect(index.search('d1', 'kiwi', { limit: 50, chatId: SMALL }).items).toHaveLength(3);
      // One piece of the index's hits (2,048 of 5,000), then the chat's three messages.
      expect(walks).toEqual(['index: 1', 'chat: 3']);
    } finally {
      db.close();
    }
  });
});
