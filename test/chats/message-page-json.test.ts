/**
 * A chat's page made as JSON text by SQLite (src/chats/message-page-json.ts, GET /chats/:chatId/messages) is the
 * same text, byte for byte, as JSON.stringify of the views messages() makes with this account's number put in:
 * on a chat with every kind of row (text needing escapes, quotes, received and sent media, revoked, edited,
 * starred, pinned, reactions of others and its own, statuses, history, deleted for me, cleared), with and without
 * a known number, on the first page and on pages after a key.
 */
import { describe, expect, it } from 'vitest';
import { MessageIndex } from '../../src/chats/message-index.js';
import { type PageKey, withOwnPhone } from '../../src/chats/message-views.js';
import type { InboxEvent, MessageReceivedData } from '../../src/inbox/inbox-events.js';
import type { OutboxEvent, QueuedContent } from '../../src/outbox/stream/outbox-events.js';
import { readModelSpecification } from '../support/read-model-specification.js';

type Event = InboxEvent | OutboxEvent;

const spec = readModelSpecification<Event, MessageIndex>((db) => new MessageIndex(db));

const ALICE = '4915100000001';
const BOB = '4915100000002';
const GROUP = '120363000000000001@g.us';
const OWN = '4915199999999';
const T = 1_767_225_600;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

const received = (
  waMessageId: string,
  at: number,
  overrides: Partial<Omit<MessageReceivedData, 'deviceId' | 'waMessageId'>> = {},
): Event => ({
  type: 'MessageReceived',
  data: {
    deviceId: 'd1',
    from: ALICE,
    type: 'text',
    body: `text of ${waMessageId}`,
    timestamp: T + at,
    waMessageId,
    ...overrides,
  },
});
const queued = (seq: number, at: number, content: QueuedContent, to = ALICE, replyTo?: unknown): Event =>
  ({
    type: 'OutboxMessageQueued',
    data: {
      deviceId: 'd1',
      outboxId: `o${seq}`,
      waMessageId: `S${seq}`,
      to,
      seq,
      content,
      createdAt: iso(T + at),
      ...(replyTo ? { replyTo } : {}),
    },
  }) as Event;
const sent = (waMessageId: string, at: number, to = ALICE): Event => ({
  type: 'MessageStatusChanged',
  data: { deviceId: 'd1', waMessageId, status: 'sent', recipient: to, timestamp: T + at },
});

/** Every kind of row a chat page shows, in ALICE's chat and in a group. */
const MIXED: Event[] = [
  received('A1', 1, { body: 'quotes " and \\ and\nnew line\ttab \u0001 \u007f \u2028 😀 é', pushName: 'Alice' }),
  received('A2', 2, { quoted: { waMessageId: 'A1', from: ALICE, type: 'text', body: 'quoted "text"' } }),
  received('M1', 3, {
    type: 'image',
    body: 'a caption',
    media: {
      mimetype: 'image/png',
      status: 'ready',
      size: 12,
      filename: 'a "b".png',
      url: '/devices/d1/messages/M1/media',
    },
  }),
  received('M2', 4, { type: 'file', body: '', media: { mimetype: 'application/pdf', status: 'pending' } }),
  queued(1, 5, { kind: 'text', text: 'sent text' }),
  queued(2, 6, {
    kind: 'image',
    media: { source: 'stored', mimetype: 'image/jpeg', size: 99, filename: 'x.jpg' },
    caption: 'sent image',
  }),
  sent('S2', 7),
  queued(3, 8, { kind: 'file', media: { source: 'url', url: 'https://example.com/f.pdf' } }),
  queued(4, 9, { kind: 'text', text: 'a reply' }, ALICE, { waMessageId: 'A2', from: ALICE, type: 'text', body: 'x' }),
  sent('S1', 10),
  received('R1', 11, { type: 'reaction', body: '', reaction: { messageId: 'S1', emoji: '👍' } }),
  queued(5, 12, { kind: 'reaction', messageId: 'A1', emoji: '🎉', fromMe: true }),
  received('R2', 13, { type: 'reaction', body: '', reaction: { messageId: 'A1', emoji: '❤️' } }),
  {
    type: 'MessageRevoked',
    data: { deviceId: 'd1', chatId: ALICE, from: ALICE, fromMe: false, waMessageId: 'M1', timestamp: T + 14 },
  },
  {
    type: 'MessageEdited',
    data: {
      deviceId: 'd1',
      chatId: ALICE,
      from: ALICE,
      fromMe: false,
      waMessageId: 'A2',
      body: 'edited',
      timestamp: T + 15,
    },
  },
  { type: 'MessageStarred', data: { deviceId: 'd1', chatId: ALICE, waMessageId: 'A2', starred: true } },
  { type: 'MessagePinned', data: { deviceId: 'd1', chatId: ALICE, waMessageId: 'S1', pinnedUntil: iso(T + 9999) } },
  received('A3', 16, { body: 'deleted for me' }),
  { type: 'MessageDeleted', data: { deviceId: 'd1', chatId: ALICE, waMessageId: 'A3' } },
  received('F1', 17, { fromMe: true, body: 'from my phone' }),
  {
    type: 'HistoryImported',
    data: {
      deviceId: 'd1',
      syncId: 'h1',
      waMessageId: 'H1',
      from: ALICE,
      type: 'text',
      body: 'old',
      timestamp: T - 100,
    },
  },
  received('G1', 18, { from: BOB, chatId: GROUP, isGroup: true, participant: BOB, body: 'in the group' }),
  received('G2', 19, { from: GROUP, chatId: GROUP, isGroup: true, participant: '', body: 'no participant' }),
  received('A4', 19, { body: 'same second' }),
  // An id JSON escapes, holding what follows it in a view: a page's key is found by the id its view shows.
  received('Q"\\,"chatId":1 ☃', 20, { body: 'an odd id' }),
] as Event[];

/** The page as the views make it, with the account's number put in, as text. */
function viewsText(index: MessageIndex, chatId: string, limit: number, phone: string, after?: PageKey) {
  const page = index.messages('d1', chatId, { limit, ...(after ? { after } : {}) });
  return { items: JSON.stringify(page.items.map((m) => withOwnPhone(phone, m))), next: page.next };
}

function jsonText(index: MessageIndex, chatId: string, limit: number, phone: string, after?: PageKey) {
  return index.messagesJson('d1', chatId, { limit, phone, ...(after ? { after } : {}) });
}

/** Both pages, whether they are the same text (and next key), and each whole page walked by its keys. */
function compare(index: MessageIndex, chatId: string, limit: number, phone: string) {
  const differences: unknown[] = [];
  let after: PageKey | undefined;
  let pages = 0;
  do {
    const json = jsonText(index, chatId, limit, phone, after);
    const views = viewsText(index, chatId, limit, phone, after);
    if (json.items !== views.items || JSON.stringify(json.next) !== JSON.stringify(views.next))
      differences.push({ after, json, views });
    after = views.next ?? undefined;
    pages++;
  } while (after && pages < 100);
  return { differences, pages };
}

describe('chat pages as JSON text', () => {
  it('are the views JSON.stringify makes, byte for byte, whatever the rows hold', () => {
    let chain = spec.given(...MIXED);
    for (const phone of ['', OWN])
      for (const chatId of [ALICE, GROUP, BOB])
        for (const limit of [1, 3, 50])
          chain = chain.then((index) => compare(index, chatId, limit, phone).differences, []);
    // Sent media are described from their queued content (viewOf makes those rows); the page shows them.
    chain.then(
      (index) => JSON.parse(jsonText(index, ALICE, 50, OWN).items) as unknown[],
      expect.arrayContaining([
        expect.objectContaining({
          waMessageId: 'S2',
          from: OWN,
          media: { mimetype: 'image/jpeg', size: 99, filename: 'x.jpg', url: '/devices/d1/messages/S2/media' },
        }),
        expect.objectContaining({
          waMessageId: 'A1',
          reactions: [
            { from: OWN, fromMe: true, emoji: '🎉' },
            { from: ALICE, fromMe: false, emoji: '❤️' },
          ],
        }),
      ]),
    );
  });

  it('leave out what was cleared, as the views do', () => {
    spec
      .given(...MIXED)
      .given({ type: 'ChatDeleted', data: { deviceId: 'd1', chatId: ALICE, cleared: true } })
      .given(received('A9', 30, { body: 'after clearing' }))
      .then((index) => jsonText(index, ALICE, 50, OWN).items, viewsTextOf('A9'))
      .then((index) => compare(index, ALICE, 1, OWN).differences, []);
  });
});

/** The page of one received message of ALICE's, as its view shows. */
function viewsTextOf(waMessageId: string) {
  return JSON.stringify([
    {
      waMessageId,
      chatId: ALICE,
      from: ALICE,
      fromMe: false,
      type: 'text',
      body: 'after clearing',
      timestamp: T + 30,
      reactions: [],
      edited: false,
      revoked: false,
      starred: false,
      pinnedUntil: null,
      historical: false,
    },
  ]);
}
