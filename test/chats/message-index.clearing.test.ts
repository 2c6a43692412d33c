/**
 * The message index (src/chats/message-index.ts) after a chat was cleared or deleted: history imported later
 * (older messages at higher log positions) neither shows cleared messages again nor brings a deleted chat back,
 * and a cleared chat shows no last message until a new one comes.
 */
import { describe, it } from 'vitest';
import { MessageIndex } from '../../src/chats/message-index.js';
import type { InboxEvent, MessageReceivedData } from '../../src/inbox/inbox-events.js';
import { readModelSpecification } from '../support/read-model-specification.js';

const spec = readModelSpecification<InboxEvent, MessageIndex>((db) => new MessageIndex(db));

const ALICE = '4915100000001';
const T = 1_767_225_600;

const message = (waMessageId: string, at: number): MessageReceivedData => ({
  deviceId: 'd1',
  from: ALICE,
  type: 'text',
  body: `text of ${waMessageId}`,
  timestamp: T + at,
  waMessageId,
});
const received = (waMessageId: string, at: number): InboxEvent => ({
  type: 'MessageReceived',
  data: message(waMessageId, at),
});
const imported = (waMessageId: string, at: number): InboxEvent => ({
  type: 'HistoryImported',
  data: { ...message(waMessageId, at), syncId: 'sync-1' },
});
const removed = (cleared: boolean): InboxEvent => ({
  type: 'ChatDeleted',
  data: { deviceId: 'd1', chatId: ALICE, cleared },
});

const pageIds = (index: MessageIndex) => index.messages('d1', ALICE, { limit: 10 }).items.map((m) => m.waMessageId);

describe('message index: cleared and deleted chats', () => {
  it('keeps older history imported after a clear out of the pages and the last message', () => {
    spec
      .given(received('A1', 10), received('A2', 20), removed(true), imported('H1', 15))
      .then(pageIds, [])
      .then(
        (index) => index.chats('d1', { limit: 10 }).items.map((c) => [c.chatId, c.lastMessage]),
        [[ALICE, undefined]],
      )
      .then((index) => index.search('d1', 'text', { limit: 10 }).items, [])
      .given(received('A3', 30))
      .then(pageIds, ['A3'])
      .then((index) => index.search('d1', 'text', { limit: 10 }).items.map((m) => m.waMessageId), ['A3'])
      .then((index) => index.chats('d1', { limit: 10 }).items[0]?.lastMessage?.waMessageId, 'A3');
  });

  it('does not bring a deleted chat back for history imported after the deletion; a new message does', () => {
    spec
      .given(received('A1', 10), removed(false), imported('H1', 5))
      .then((index) => index.chats('d1', { limit: 10 }).items, [])
      .then(pageIds, [])
      .given(received('A2', 30))
      .then((index) => index.chats('d1', { limit: 10 }).items.map((c) => c.chatId), [ALICE])
      .then(pageIds, ['A2']);
  });
});
