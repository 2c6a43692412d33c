import { describe, expect, it } from 'vitest';
import { fold } from '../../src/commands/decider.js';
import { REMEMBERED_INBOUND, inboxDecider, inboxSnapshot } from '../../src/inbox/inbox-decider.js';
import type { InboxEvent, MessageReceivedData } from '../../src/inbox/inbox-events.js';
import { deciderSpecification } from '../support/decider-specification.js';

const spec = deciderSpecification(inboxDecider);
const message = (waMessageId: string): MessageReceivedData => ({
  deviceId: 'd',
  from: '4915112345678',
  type: 'text',
  body: 'hi',
  timestamp: 1_790_000_000,
  waMessageId,
});
const received = (waMessageId: string): InboxEvent => ({ type: 'MessageReceived', data: message(waMessageId) });

describe('the inbox decider', () => {
  it('records a new message', () =>
    spec
      .given([])
      .when({ type: 'RecordInbound', message: message('A') })
      .then([received('A')]));
  it('records a message the inbox already holds once (WhatsApp delivers it again)', () =>
    spec
      .given([received('A'), received('B')])
      .when({ type: 'RecordInbound', message: message('A') })
      .thenNothing());
  it('records the next message', () =>
    spec
      .given([received('A')])
      .when({ type: 'RecordInbound', message: message('B') })
      .then([received('B')]));
  it('remembers only the latest messages, so its state stays small', () => {
    const many = Array.from({ length: REMEMBERED_INBOUND + 10 }, (_, i) => received(`M${i}`));
    const state = fold(inboxDecider, inboxDecider.initialState(), many);
    expect(state.recent).toHaveLength(REMEMBERED_INBOUND);
    expect(state.recent[0]).toBe('M10');
    spec
      .given(many)
      .when({ type: 'RecordInbound', message: message(`M${REMEMBERED_INBOUND + 9}`) })
      .thenNothing();
  });
  it('snapshots round-trip', () => {
    const state = fold(inboxDecider, inboxDecider.initialState(), [received('A'), received('B')]);
    expect(inboxSnapshot.fromJson(JSON.parse(JSON.stringify(inboxSnapshot.toJson(state))))).toEqual(state);
  });
});
