/**
 * The message index (src/chats/message-index.ts), fed events directly: the chats and pages of messages that
 * received and sent messages make, a send's statuses and their history, read receipts clearing the unread
 * count, reactions, edits and revokes (from the right party only), received media and what the retention
 * sweep reads, and what the outbox reads of the messages a device has seen. Conversations over HTTP are in
 * conversations.test.ts; this is the read model alone.
 */
import { describe, expect, it } from 'vitest';
import { MessageIndex } from '../../src/chats/message-index.js';
import type { InboxEvent, MessageReceivedData } from '../../src/inbox/inbox-events.js';
import type { InboundMedia, MessageStatusChangedData } from '../../src/messages/message-events.js';
import type { OutboxEvent, QueuedContent } from '../../src/outbox/stream/outbox-events.js';
import { readModelSpecification } from '../support/read-model-specification.js';

type Event = InboxEvent | OutboxEvent;

const spec = readModelSpecification<Event, MessageIndex>((db) => new MessageIndex(db));

const ALICE = '4915100000001';
const BOB = '4915100000002';
const GROUP = '120363000000000001@g.us';
/** Unix seconds of the messages: T + n. */
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
const queued = (
  seq: number,
  at: number,
  content: QueuedContent = { kind: 'text', text: `sent ${seq}` },
  to = ALICE,
): Event => ({
  type: 'OutboxMessageQueued',
  data: { deviceId: 'd1', outboxId: `o${seq}`, waMessageId: `S${seq}`, to, seq, content, createdAt: iso(T + at) },
});
const status = (
  waMessageId: string,
  next: MessageStatusChangedData['status'],
  at: number,
  error?: MessageStatusChangedData['error'],
): Event => ({
  type: 'MessageStatusChanged',
  data: {
    deviceId: 'd1',
    waMessageId,
    status: next,
    recipient: ALICE,
    timestamp: T + at,
    ...(error ? { error } : {}),
  },
});
const chatRead = (chatId: string, ...waMessageIds: string[]): Event => ({
  type: 'ChatRead',
  data: { deviceId: 'd1', chatId, waMessageIds, timestamp: T + 100 },
});
const edited = (waMessageId: string, chatId: string, from: string, fromMe: boolean, body: string): Event => ({
  type: 'MessageEdited',
  data: { deviceId: 'd1', chatId, from, fromMe, waMessageId, body, timestamp: T + 50 },
});
const revoked = (waMessageId: string, chatId: string, from: string, fromMe: boolean): Event => ({
  type: 'MessageRevoked',
  data: { deviceId: 'd1', chatId, from, fromMe, waMessageId, timestamp: T + 60 },
});

/** A chat's settings as a fresh chat has them (unread: it has unread messages). */
const settings = { archived: false, pinned: false, mutedUntil: null, unread: true, labels: [] };

const pageIds = (page: { items: Array<{ waMessageId: string }> }) => page.items.map((item) => item.waMessageId);

describe('message index', () => {
  it("lists a device's chats by latest activity, with their unread count, name and last message", () => {
    spec
      .given(
        received('A1', 1, { pushName: 'Alice' }),
        received('B1', 2, { from: BOB }),
        received('G1', 3, { from: BOB, chatId: GROUP, isGroup: true, participant: BOB, pushName: 'Bob' }),
      )
      .given(received('A2', 4), queued(1, 5, { kind: 'text', text: 'to bob' }, BOB))
      .then(
        (index) => index.chats('d1', { limit: 10 }).items,
        [
          {
            chatId: BOB,
            isGroup: false,
            unreadCount: 1,
            lastMessage: { waMessageId: 'S1', fromMe: true, type: 'text', body: 'to bob', timestamp: T + 5 },
            updatedAt: iso(T + 5),
            ...settings,
          },
          {
            chatId: ALICE,
            isGroup: false,
            name: 'Alice',
            unreadCount: 2,
            lastMessage: { waMessageId: 'A2', fromMe: false, type: 'text', body: 'text of A2', timestamp: T + 4 },
            updatedAt: iso(T + 4),
            ...settings,
          },
          // A group is not named after whoever wrote in it last.
          expect.objectContaining({ chatId: GROUP, isGroup: true, unreadCount: 1 }),
        ],
      )
      .then((index) => index.chats('d1', { limit: 2 }).next, { at: T + 4, pos: 4 })
      .then(
        (index) => index.chats('d1', { limit: 2, after: { at: T + 4, pos: 4 } }).items.map((c) => c.chatId),
        [GROUP],
      )
      .then(
        (index) => [index.hasChat('d1', ALICE), index.hasChat('d1', '4915100000404'), index.hasChat('d2', ALICE)],
        [true, false, false],
      );
  });

  it("pages a chat's messages newest first, by timestamp then log position, a message recorded twice once", () => {
    spec
      .given(received('A1', 1), received('A3', 3), received('A2', 3), received('A2', 3, { body: 'again' }))
      .given(received('A0', 0), queued(1, 2))
      .then((index) => pageIds(index.messages('d1', ALICE, { limit: 10 })), ['A2', 'A3', 'S1', 'A1', 'A0'])
      .then((index) => index.messages('d1', ALICE, { limit: 2 }).next, { at: T + 3, pos: 2 })
      .then((index) => pageIds(index.messages('d1', ALICE, { limit: 2, after: { at: T + 3, pos: 2 } })), ['S1', 'A1'])
      .then((index) => index.messages('d1', ALICE, { limit: 1 }).items[0], {
        waMessageId: 'A2',
        chatId: ALICE,
        from: ALICE,
        fromMe: false,
        type: 'text',
        body: 'text of A2',
        timestamp: T + 3,
        reactions: [],
        edited: false,
        revoked: false,
        starred: false,
        pinnedUntil: null,
        historical: false,
      })
      .then((index) => index.chats('d1', { limit: 10 }).items[0]?.unreadCount, 4);
  });

  it("follows a send's statuses forward only, and answers its whole history", () => {
    const refused = { code: 'send_refused', message: 'refused' };
    spec
      .given(queued(1, 1), queued(2, 2))
      .given(status('S1', 'sent', 3), status('S1', 'read', 5), status('S1', 'delivered', 4))
      .given(status('S2', 'sent', 3), status('S2', 'failed', 4, refused))
      .then((index) => index.message('d1', 'S1'), {
        waMessageId: 'S1',
        chatId: ALICE,
        from: '',
        fromMe: true,
        type: 'text',
        body: 'sent 1',
        timestamp: T + 1,
        status: 'read',
        reactions: [],
        edited: false,
        revoked: false,
        starred: false,
        pinnedUntil: null,
        historical: false,
        outboxId: 'o1',
        statusHistory: [
          { status: 'queued', at: iso(T + 1) },
          { status: 'sent', at: iso(T + 3) },
          { status: 'read', at: iso(T + 5) },
          { status: 'delivered', at: iso(T + 4) },
        ],
      })
      .then((index) => index.message('d1', 'S2')?.statusHistory?.at(-1), {
        status: 'failed',
        at: iso(T + 4),
        error: refused,
      })
      .then(
        (index) => index.find('d1', 'S1'),
        expect.objectContaining({ status: 'read', sentAt: T + 3, outboxId: 'o1' }),
      )
      // A status of a message the outbox did not send (a received one) changes nothing.
      .given(received('A1', 6), status('A1', 'read', 7))
      .then((index) => index.message('d1', 'A1')?.status, undefined);
  });

  it('clears the unread count of a chat by the received messages read there, each once', () => {
    spec
      .given(
        received('A1', 1),
        received('A2', 2),
        received('A3', 3, { participant: ALICE }),
        received('B1', 4, { from: BOB }),
      )
      .given(queued(1, 5))
      .then(
        (index) => index.unread('d1', ALICE),
        [{ waMessageId: 'A1' }, { waMessageId: 'A2' }, { waMessageId: 'A3', participant: ALICE }],
      )
      // Its own send does not count, and the second receipt for A1 clears nothing more.
      .given(chatRead(ALICE, 'A1', 'S1'), chatRead(ALICE, 'A1'))
      .then(
        (index) => index.chats('d1', { limit: 10 }).items.map((c) => [c.chatId, c.unreadCount]),
        [
          [ALICE, 2],
          [BOB, 1],
        ],
      )
      .then((index) => index.unread('d1', ALICE).map((m) => m.waMessageId), ['A2', 'A3'])
      .then((index) => index.participantOf('d1', 'A1'), { chatId: ALICE, fromMe: false, read: true })
      .then((index) => index.participantOf('d1', 'B1'), { chatId: BOB, fromMe: false, read: false })
      .then((index) => index.participantOf('d1', 'nothing'), undefined);
  });

  it('shows the latest reaction of each sender on its message, never as a message of its own', () => {
    const reaction = (
      waMessageId: string,
      from: string,
      emoji: string,
      options: { chatId?: string; fromMe?: boolean } = {},
    ) =>
      received(waMessageId, 10, {
        from,
        type: 'reaction',
        body: emoji,
        reaction: { messageId: 'S1', emoji },
        ...(options.chatId ? { chatId: options.chatId } : {}),
        ...(options.fromMe ? { fromMe: true } : {}),
      });
    spec
      .given(queued(1, 1))
      .given(
        reaction('R1', ALICE, '👍'),
        reaction('R2', ALICE, '❤️'),
        queued(2, 11, { kind: 'reaction', messageId: 'S1', emoji: '🎉', fromMe: true }),
      )
      // A reaction naming the message from another chat is no reaction to it.
      .given(reaction('R3', BOB, '😮', { chatId: BOB }))
      .then(
        (index) => index.message('d1', 'S1')?.reactions,
        [
          { from: ALICE, fromMe: false, emoji: '❤️' },
          { from: '', fromMe: true, emoji: '🎉' },
        ],
      )
      .then((index) => pageIds(index.messages('d1', ALICE, { limit: 10 })), ['S1'])
      .then(
        (index) =>
          index.chats('d1', { limit: 10 }).items.map((c) => [c.chatId, c.unreadCount, c.lastMessage?.waMessageId]),
        [[ALICE, 0, 'S1']],
      )
      .given(reaction('R4', ALICE, ''))
      .then((index) => index.message('d1', 'S1')?.reactions, [{ from: '', fromMe: true, emoji: '🎉' }]);
  });

  it('takes edits and revokes from the sender only (any member may revoke in a group), and blanks a revoked text', () => {
    spec
      .given(
        received('A1', 1),
        received('A2', 2),
        queued(1, 3),
        received('G1', 4, { from: BOB, chatId: GROUP, isGroup: true, participant: BOB }),
      )
      .given(
        edited('A1', ALICE, ALICE, false, 'A1 edited'),
        edited('A2', ALICE, BOB, false, 'not by bob'),
        edited('S1', ALICE, ALICE, false, 'not by alice'),
        edited('A2', BOB, ALICE, false, 'not in another chat'),
      )
      .given(revoked('S1', ALICE, ALICE, true), revoked('A2', ALICE, ALICE, true), revoked('G1', GROUP, ALICE, false))
      .then(
        (index) =>
          pageIds(index.messages('d1', ALICE, { limit: 10 }))
            .map((id) => index.message('d1', id))
            .map((m) => [m?.waMessageId, m?.body, m?.edited, m?.revoked]),
        [
          ['S1', '', false, true],
          ['A2', 'text of A2', false, false],
          ['A1', 'A1 edited', true, false],
        ],
      )
      .then((index) => index.message('d1', 'G1'), expect.objectContaining({ body: '', revoked: true }))
      .then((index) => index.chats('d1', { limit: 10 }).items.find((c) => c.chatId === GROUP)?.lastMessage?.body, '')
      .then((index) => index.message('d1', 'S1')?.statusHistory, [{ status: 'queued', at: iso(T + 3) }]);
  });

  it("shows an edit or a revoke of a chat's last message in its chat list entry, and none of an older message", () => {
    // The chat's row keeps its last message's body (chat-rows.ts): each change in a batch of its own, so the chat
    // is read back from its row, and one in the batch that brought the message.
    const last = (index: MessageIndex) => {
      const views = index.chats('d1', { limit: 10 }).items;
      expect(JSON.parse(index.chatsJson('d1', { limit: 10 }).items)).toEqual(views);
      return views.map((c) => [c.chatId, c.lastMessage?.waMessageId, c.lastMessage?.body]);
    };
    spec
      .given(received('A1', 1), received('A2', 2))
      .given(edited('A1', ALICE, ALICE, false, 'A1 edited'))
      .then(last, [[ALICE, 'A2', 'text of A2']])
      .given(edited('A2', ALICE, ALICE, false, 'A2 edited'))
      .then(last, [[ALICE, 'A2', 'A2 edited']])
      .given(queued(1, 3), status('S1', 'sent', 4))
      .then(last, [[ALICE, 'S1', 'sent 1']])
      .given(status('S1', 'deleted', 5))
      .then(last, [[ALICE, 'S1', '']])
      .given(
        received('G1', 6, { from: BOB, chatId: GROUP, isGroup: true, participant: BOB }),
        revoked('G1', GROUP, BOB, false),
      )
      .then(last, [
        [GROUP, 'G1', ''],
        [ALICE, 'S1', ''],
      ]);
  });

  it('edits a queued text unseen, and a sent one seen, each in its history', () => {
    spec
      .given(queued(1, 1), queued(2, 2), status('S2', 'sent', 3))
      .given(
        {
          type: 'OutboxMessageEdited',
          data: { deviceId: 'd1', outboxId: 'o1', waMessageId: 'S1', text: 'first, corrected' },
          createdAt: new Date((T + 4) * 1000),
        },
        queued(3, 5, { kind: 'edit', messageId: 'S2', text: 'second, corrected' }),
        // An edit send of a message this account did not send edits nothing.
        received('A1', 6),
        queued(4, 7, { kind: 'edit', messageId: 'A1', text: 'not mine' }),
      )
      .then((index) => index.message('d1', 'S1'), expect.objectContaining({ body: 'first, corrected', edited: false }))
      .then((index) => index.message('d1', 'S1')?.statusHistory?.map((s) => s.status), ['queued', 'edited'])
      .then((index) => index.message('d1', 'S2'), expect.objectContaining({ body: 'second, corrected', edited: true }))
      .then((index) => index.message('d1', 'S2')?.statusHistory?.map((s) => s.status), ['queued', 'sent', 'edited'])
      .then((index) => index.message('d1', 'A1')?.body, 'text of A1')
      .then((index) => index.message('d1', 'S3'), undefined);
  });

  it('keeps received media from when it is stored, for the retention sweep, and a revoked one for the revoked sweep', () => {
    const ready: InboundMedia = {
      mimetype: 'image/png',
      size: 3,
      status: 'ready',
      url: '/devices/d1/messages/M1/media',
    };
    spec
      .given(
        received('M1', 1, { type: 'image', body: '', media: { mimetype: 'image/png', status: 'pending' } }),
        received('M2', 2, { type: 'image', body: '', media: { ...ready, url: '/devices/d1/messages/M2/media' } }),
      )
      .then(
        (index) => index.mediaStoredBefore(Number.MAX_SAFE_INTEGER, 10),
        [{ deviceId: 'd1', waMessageId: 'M2', storedAt: Date.parse('2026-01-01T00:00:02.000Z') }],
      )
      .given({ type: 'InboundMediaUpdated', data: { deviceId: 'd1', waMessageId: 'M1', media: ready } })
      .then((index) => index.message('d1', 'M1')?.media, ready)
      .then((index) => index.mediaStoredBefore(Number.MAX_SAFE_INTEGER, 10).map((m) => m.waMessageId), ['M2', 'M1'])
      .given(revoked('M2', ALICE, ALICE, false))
      .then((index) => index.revokedMediaAfter(0, 10), [{ deviceId: 'd1', waMessageId: 'M2', revokedAt: 4 }])
      .then((index) => index.message('d1', 'M2'), expect.not.objectContaining({ media: expect.anything() }));
  });

  it("answers what a reply quotes, a poll's secret, and what a forward copies", () => {
    spec
      .given(
        received('P1', 1, {
          type: 'poll',
          body: 'lunch?',
          poll: { question: 'lunch?', options: ['yes', 'no'], multipleAnswers: false },
          secret: 'c2VjcmV0',
        }),
        received('L1', 2, {
          type: 'location',
          body: 'Office',
          location: { latitude: 52.5, longitude: 13.4, name: 'Office' },
        }),
      )
      .then((index) => index.poll('d1', 'P1'), { options: ['yes', 'no'], secret: 'c2VjcmV0' })
      .then((index) => index.poll('d1', 'L1'), undefined)
      .then((index) => index.quoted('d1', 'P1'), {
        chatId: ALICE,
        fromMe: false,
        from: ALICE,
        type: 'poll',
        body: 'lunch?',
      })
      .then((index) => index.find('d1', 'L1')?.received, {
        location: { latitude: 52.5, longitude: 13.4, name: 'Office' },
      })
      .then((index) => index.find('d2', 'L1'), undefined);
  });

  it('forgets what a batch that rolled back held: applied again, it lands as if applied once', () => {
    spec
      .given(received('A1', 1), queued(1, 2))
      .givenRetried(received('A2', 3), status('S1', 'sent', 4), chatRead(ALICE, 'A1'))
      .then(
        (index) => index.chats('d1', { limit: 10 }).items[0],
        expect.objectContaining({ unreadCount: 1, lastMessage: expect.objectContaining({ waMessageId: 'A2' }) }),
      )
      .then((index) => index.message('d1', 'S1')?.statusHistory?.map((s) => s.status), ['queued', 'sent'])
      .then((index) => pageIds(index.messages('d1', ALICE, { limit: 10 })), ['A2', 'S1', 'A1']);
  });
});
