/**
 * A device's chat list made as JSON text by SQLite (src/chats/chat-list-json.ts, GET /chats) is the same text,
 * byte for byte, as JSON.stringify of the views chats() makes: on chats of every kind (names needing escapes, no
 * name, group ids and ids that only look like one, settings, labels, a revoked last message, cleared and deleted
 * chats, times at the ends of the years SQLite writes and beyond them), with every filter, on the first page and on
 * pages after a key.
 */
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { type ChatFilter, chatListJsonQuery } from '../../src/chats/chat-list-json.js';
import { MessageIndex } from '../../src/chats/message-index.js';
import type { PageKey } from '../../src/chats/message-views.js';
import type { InboxEvent, MessageReceivedData } from '../../src/inbox/inbox-events.js';
import { isGroupId } from '../../src/messages/chat-id.js';
import { readModelSpecification } from '../support/read-model-specification.js';

const spec = readModelSpecification<InboxEvent, MessageIndex>((db) => new MessageIndex(db));

const T = 1_767_225_600;

let seq = 0;
const received = (
  chatId: string,
  at: number,
  overrides: Partial<Omit<MessageReceivedData, 'deviceId' | 'waMessageId'>> = {},
): InboxEvent => ({
  type: 'MessageReceived',
  data: {
    deviceId: 'd1',
    from: chatId,
    chatId,
    type: 'text',
    body: `text in ${chatId}`,
    timestamp: at,
    waMessageId: `W${++seq}`,
    ...overrides,
  },
});

const digits = (n: number) => '1234567890'.repeat(4).slice(0, n);

/** Ids isGroupId says yes and no to, at the edges of its pattern. */
const CHAT_IDS = [
  `${digits(5)}@g.us`,
  `${digits(4)}@g.us`,
  `${digits(32)}@g.us`,
  `${digits(33)}@g.us`,
  `${digits(5)}-${digits(5)}@g.us`,
  `${digits(32)}-${digits(20)}@g.us`,
  `${digits(5)}-${digits(4)}@g.us`,
  `${digits(5)}-${digits(21)}@g.us`,
  `${digits(4)}-${digits(5)}@g.us`,
  `${digits(5)}-${digits(5)}-${digits(5)}@g.us`,
  `${digits(5)}--${digits(5)}@g.us`,
  `-${digits(5)}@g.us`,
  `${digits(5)}-@g.us`,
  '12a45@g.us',
  '١٢٣٤٥@g.us',
  `${digits(5)}@G.US`,
  `${digits(5)}@g.usx`,
  `${digits(5)}xg.us`,
  '@g.us',
  `${digits(12)}@lid`,
  '4915100000001',
];

/** Chats of every kind, each with a message at its own second. */
function chatsOfEveryKind(): InboxEvent[] {
  const events: InboxEvent[] = CHAT_IDS.map((chatId, i) =>
    received(chatId, T + i, { isGroup: isGroupId(chatId), ...(i % 2 ? { pushName: `Name ${i}` } : {}) }),
  );
  const more: InboxEvent[] = [
    received('4915100000002', T + 100, { pushName: 'quotes " and \\ and\nnew line \u0001 \u2028 😀 é' }),
    received('4915100000003', T + 101, { fromMe: true, body: 'from my phone' }),
    received('4915100000004', T + 102, { pushName: '' }),
    // Revoked: its text is gone from the list too.
    received('4915100000005', T + 103, { body: 'to be revoked' }),
    {
      type: 'MessageRevoked',
      data: {
        deviceId: 'd1',
        chatId: '4915100000005',
        from: '4915100000005',
        fromMe: false,
        waMessageId: `W${seq}`,
        timestamp: T + 104,
      },
    },
    // The same second as another chat: the log position orders them.
    received('4915100000006', T + 103),
    received('4915100000007', T + 105),
    { type: 'ChatUpdated', data: { deviceId: 'd1', chatId: '4915100000007', archived: true, mutedUntil: 'forever' } },
    received('4915100000008', T + 106),
    {
      type: 'ChatUpdated',
      data: { deviceId: 'd1', chatId: '4915100000008', pinned: true, mutedUntil: '2027-01-01T00:00:00.000Z' },
    },
    received('4915100000009', T + 107),
    { type: 'ChatUpdated', data: { deviceId: 'd1', chatId: '4915100000009', unread: false } },
    { type: 'ChatUpdated', data: { deviceId: 'd1', chatId: '4915100000009', unread: true } },
    received('4915100000010', T + 108),
    { type: 'ChatLabelChanged', data: { deviceId: 'd1', chatId: '4915100000010', labelId: '3', action: 'add' } },
    { type: 'ChatLabelChanged', data: { deviceId: 'd1', chatId: '4915100000010', labelId: '7', action: 'add' } },
    received('4915100000011', T + 109),
    { type: 'ChatLabelChanged', data: { deviceId: 'd1', chatId: '4915100000011', labelId: '3', action: 'add' } },
    { type: 'ChatLabelChanged', data: { deviceId: 'd1', chatId: '4915100000011', labelId: '3', action: 'remove' } },
    // Cleared: no last message until the next one.
    received('4915100000012', T + 110),
    { type: 'ChatDeleted', data: { deviceId: 'd1', chatId: '4915100000012', cleared: true } },
    received('4915100000013', T + 111),
    { type: 'ChatDeleted', data: { deviceId: 'd1', chatId: '4915100000013', cleared: false } },
    // Times at the ends of what strftime writes, and beyond them (Date's extended years).
    received('4915100000020', -62_167_219_200),
    received('4915100000021', -62_167_219_201),
    received('4915100000022', 253_402_300_799),
    received('4915100000023', 253_402_300_800),
    received('4915100000024', 0),
    received('4915100000025', -1),
    // Not a whole second: chatViewOf writes this one.
    received('4915100000026', T + 0.5),
  ];
  return [...events, ...more];
}

const FILTERS: ChatFilter[] = [
  {},
  { archived: true },
  { archived: false },
  { pinned: true },
  { pinned: false },
  { unread: true },
  { unread: false },
  { label: '3' },
  { label: '7', archived: false },
];

/** Both lists page by page; the pages that differ, and how many pages there were. */
function compare(index: MessageIndex, limit: number, filter: ChatFilter) {
  const differences: unknown[] = [];
  let after: PageKey | undefined;
  let pages = 0;
  do {
    const options = { limit, filter, ...(after ? { after } : {}) };
    const json = index.chatsJson('d1', options);
    const views = index.chats('d1', options);
    const viewsText = JSON.stringify(views.items);
    if (json.items !== viewsText || JSON.stringify(json.next) !== JSON.stringify(views.next))
      differences.push({ after, json, views: viewsText });
    after = views.next ?? undefined;
    pages++;
  } while (after && pages < 100);
  return { differences, pages };
}

describe('chat lists as JSON text', () => {
  it('are the views JSON.stringify makes, byte for byte, whatever the chats hold', () => {
    let chain = spec.given(...chatsOfEveryKind());
    for (const filter of FILTERS)
      for (const limit of [1, 4, 50]) chain = chain.then((index) => compare(index, limit, filter).differences, []);
    // The list is there, groups told apart as isGroupId does, a deleted chat left out.
    chain.then(
      (index) => {
        const items = JSON.parse(index.chatsJson('d1', { limit: 200 }).items) as Array<{
          chatId: string;
          isGroup: boolean;
        }>;
        return {
          count: items.length,
          groups: items.filter((c) => c.isGroup).map((c) => c.chatId),
          deleted: items.some((c) => c.chatId === '4915100000013'),
        };
      },
      {
        count: CHAT_IDS.length + 18,
        groups: expect.arrayContaining(CHAT_IDS.filter(isGroupId)) as string[],
        deleted: false,
      },
    );
  });

  it("reads no message row: the activity index, then each chat's own row (it keeps its last message's part)", () => {
    const db = new Database(':memory:');
    try {
      new MessageIndex(db).setup(db);
      const plans = [{}, { archived: true, label: '3' }].map((filter) => {
        const { text, args } = chatListJsonQuery('d1', { limit: 50, filter, after: { at: T, pos: 9 } });
        return (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...args) as Array<{ detail: string }>)
          .map((step) => step.detail)
          .join('; ');
      });
      for (const plan of plans) {
        expect(plan).toContain('SEARCH c USING INDEX chats_by_activity');
        expect(plan).not.toContain('chat_messages');
        expect(plan).not.toContain('TEMP B-TREE');
      }
    } finally {
      db.close();
    }
  });
});
