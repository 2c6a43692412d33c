/**
 * The message index (src/chats/message-index-projection.ts) importing history: however much is imported, it holds no
 * history message in memory after its batch (only its chats), and a later change of a history message finds it in
 * the table.
 */
import { describe, expect, it } from 'vitest';
import { MessageIndex } from '../../src/chats/message-index.js';
import type { InboxEvent } from '../../src/inbox/inbox-events.js';
import { readModelSpecification } from '../support/read-model-specification.js';

const spec = readModelSpecification<InboxEvent, MessageIndex>((db) => new MessageIndex(db));

const ALICE = '4915100000001';
const BOB = '4915100000002';
const T = 1_767_225_600;

const imported = (chat: string, k: number): InboxEvent => ({
  type: 'HistoryImported',
  data: {
    deviceId: 'd1',
    from: chat,
    chatId: chat,
    type: 'text',
    body: `history ${k} with ${chat}`,
    timestamp: T + k,
    waMessageId: `H-${chat}-${k}`,
    syncId: `sync-${Math.floor(k / 100)}`,
    chatName: chat === ALICE ? 'Alice' : 'Bob',
  },
});
/** `count` history messages from `first` on, half with each contact. */
const chunk = (first: number, count: number) =>
  Array.from({ length: count }, (_, i) => imported(i % 2 === 0 ? ALICE : BOB, first + i));

describe('message index: history import', () => {
  it('holds no history message in memory after its batch, however many batches are imported', () => {
    spec
      .given(...chunk(0, 300))
      .then((index) => index.heldRows(), { messages: 0, chats: 2 })
      .given(...chunk(300, 300))
      .given(...chunk(600, 300))
      .then((index) => index.heldRows(), { messages: 0, chats: 2 })
      .then((index) => index.messages('d1', ALICE, { limit: 500 }).items.length, 450)
      .then(
        (index) => index.chats('d1', { limit: 10 }).items.map((c) => [c.chatId, c.name]),
        [
          [BOB, 'Bob'],
          [ALICE, 'Alice'],
        ],
      );
  });

  it('finds a history message in the table when a later batch changes it', () => {
    const edited: InboxEvent = {
      type: 'MessageEdited',
      data: {
        deviceId: 'd1',
        chatId: ALICE,
        from: ALICE,
        fromMe: false,
        waMessageId: `H-${ALICE}-4`,
        body: 'fixed',
        timestamp: T + 1_000,
      },
    };
    spec
      .given(...chunk(0, 10))
      .given(edited)
      .then((index) => index.message('d1', `H-${ALICE}-4`), expectEdited())
      .then((index) => index.search('d1', 'fixed', { limit: 10 }).items.map((m) => m.waMessageId), [`H-${ALICE}-4`]);
  });
});

function expectEdited() {
  return expect.objectContaining({ body: 'fixed', edited: true, historical: true });
}
