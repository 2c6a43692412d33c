/**
 * The outbox decider, given / when / then (test/support/decider-specification.ts): given the events of the
 * outbox stream (folded by the decider's pure evolve), when a command is decided, then its events and the
 * result it answers, or the DomainError that refuses it. One block per command.
 */
import { describe, expect, it } from 'vitest';
import { fold } from '../../../src/commands/decider.js';
import type { Receipt } from '../../../src/engines/engine.js';
import {
  type DeleteOutcome,
  EDIT_WINDOW_MS,
  type NewMessage,
  type OutboxCommand,
  type SeenRecord,
  outboxDecider,
} from '../../../src/outbox/stream/outbox-decider.js';
import type { OutboxError, OutboxEvent, OutboxNewEvent } from '../../../src/outbox/stream/outbox-events.js';
import { OutboxState, type PendingMessage } from '../../../src/outbox/stream/outbox-state.js';
import { deciderSpecification } from '../../support/decider-specification.js';

const spec = deciderSpecification(outboxDecider);
const given = (...events: OutboxEvent[]) => spec.given(events);

const D = 'd';
const PEER = '4915100000000';
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const SECONDS = Math.floor(NOW / 1000);

const queued = (n: number, fields: Partial<NewMessage> = {}): OutboxEvent => ({
  type: 'OutboxMessageQueued',
  data: {
    deviceId: D,
    outboxId: `o${n}`,
    waMessageId: `W${n}`,
    to: PEER,
    seq: n,
    content: { kind: 'text', text: `m${n}` },
    createdAt: '2026-11-22T12:00:00.000Z',
    ...fields,
  },
});
const sending = (n: number, attempt = 1): OutboxEvent => ({
  type: 'OutboxMessageSending',
  data: { deviceId: D, outboxId: `o${n}`, waMessageId: `W${n}`, attempt },
});
const attemptFailed = (n: number, retryAt = 0): OutboxEvent => ({
  type: 'OutboxAttemptFailed',
  data: {
    deviceId: D,
    outboxId: `o${n}`,
    waMessageId: `W${n}`,
    attempt: 1,
    error: { code: 'x', message: 'x' },
    counted: true,
    retryAt,
  },
});
type Status = 'sent' | 'delivered' | 'read' | 'failed' | 'cancelled' | 'expired' | 'deleted';
const status = (n: number, s: Status, error?: OutboxError, waMessageId = `W${n}`): OutboxEvent => ({
  type: 'MessageStatusChanged',
  data: {
    deviceId: D,
    waMessageId,
    status: s,
    recipient: PEER,
    outboxId: `o${n}`,
    timestamp: SECONDS,
    ...(error ? { error } : {}),
  },
});
const revokeRequested = (waMessageId: string, outboxId?: string): OutboxEvent => ({
  type: 'OutboxRevokeRequested',
  data: { deviceId: D, waMessageId, to: PEER, ...(outboxId ? { outboxId } : {}) },
});
const revokeFailed = (waMessageId: string, attempt: number, final = false): OutboxEvent => ({
  type: 'OutboxRevokeFailed',
  data: { deviceId: D, waMessageId, error: { code: 'e', message: 'm' }, final, attempt, retryAt: NOW + 5 },
});
/** A pending message as the state holds it (PendingMessage), for results. */
const pending = (n: number, fields: Record<string, unknown> = {}) =>
  expect.objectContaining({ outboxId: `o${n}`, waMessageId: `W${n}`, ...fields });

describe('the outbox decider', () => {
  describe('evolve', () => {
    it('is pure: the state it is given stays as it was, and folding gives what applying in place gives', () => {
      const history = [queued(1), queued(2, { idempotency: { key: 'k', fingerprint: 'f' } }), sending(1)];
      const before = fold(outboxDecider, outboxDecider.initialState(), history);
      const snapshot = JSON.stringify(before.toSnapshot());
      const rest = [
        attemptFailed(1),
        status(2, 'delivered'),
        status(2, 'sent'),
        revokeRequested('V1'),
        revokeFailed('V1', 1),
      ];
      const after = fold(outboxDecider, before, rest);
      expect(JSON.stringify(before.toSnapshot())).toBe(snapshot);
      expect(before.messages.get('o1')?.status).toBe('sending');
      expect(before.hasRecentReceipt('W2', 'delivered')).toBe(false);

      const inPlace = new OutboxState();
      for (const event of [...history, ...rest]) inPlace.apply(event);
      expect(after.toSnapshot()).toEqual(inPlace.toSnapshot());
      expect(after.recentlyLeftMessage('W2')).toEqual({ outboxId: 'o2', status: 'sent' });
      expect(after.hasRecentReceipt('W2', 'delivered')).toBe(true);
    });
  });

  describe('QueueMessage', () => {
    const message = (n: number, fields: Partial<NewMessage> = {}): NewMessage => ({
      outboxId: `o${n}`,
      waMessageId: `W${n}`,
      to: PEER,
      content: { kind: 'text', text: 'x' },
      createdAt: '2026-01-01T00:00:00.000Z',
      ...fields,
    });
    const queue = (m: NewMessage, legacyFingerprint?: string): OutboxCommand => ({
      type: 'QueueMessage',
      deviceId: D,
      message: m,
      idempotencyTtlMs: 60_000,
      ...(legacyFingerprint ? { legacyFingerprint } : {}),
    });

    it('queues with the next sequence number', () => {
      const data = { deviceId: D, ...message(3), seq: 3 };
      given(queued(1), queued(2))
        .when(queue(message(3)))
        .then([{ type: 'OutboxMessageQueued', data }], { kind: 'queued', message: data });
    });

    it('decides an Idempotency-Key on the stream: a repeat queues nothing and answers the first (issue 14)', () => {
      const keyed = message(1, { idempotency: { key: 'k', fingerprint: 'f' } });
      const first = { type: 'OutboxMessageQueued' as const, data: { deviceId: D, ...keyed, seq: 1 } };
      const again = { ...keyed, outboxId: 'o2', waMessageId: 'W2', createdAt: '2026-01-01T00:00:30.000Z' };
      const firstAnswer = expect.objectContaining({ outboxId: 'o1', waMessageId: 'W1', status: 'queued' });
      given(first).when(queue(again)).thenNothing({ kind: 'repeated', answer: firstAnswer });
      // Another request under the same key is refused.
      given(first)
        .when(queue({ ...again, idempotency: { key: 'k', fingerprint: 'other' } }))
        .thenRefused('idempotency_key_reused');
      // A key recorded with a fingerprint made the way it was before is recognised by that legacy fingerprint, and only by it.
      const canonical = { ...again, idempotency: { key: 'k', fingerprint: 'canonical' } };
      given(first).when(queue(canonical, 'f')).thenNothing({ kind: 'repeated', answer: firstAnswer });
      given(first).when(queue(canonical, 'other')).thenRefused('idempotency_key_reused');
      // Past its time to live the key is a new request.
      const later = { ...again, createdAt: '2026-01-01T00:02:00.000Z' };
      given(first)
        .when(queue(later))
        .then([{ type: 'OutboxMessageQueued', data: { deviceId: D, ...later, seq: 2 } }]);
      // The keys survive a snapshot.
      const state = OutboxState.fromSnapshot(fold(outboxDecider, new OutboxState(), [first]).toSnapshot());
      expect(outboxDecider.decide(queue(again), state).result).toEqual({ kind: 'repeated', answer: firstAnswer });
    });
  });

  describe('CancelMessage', () => {
    const cancel: OutboxCommand = { type: 'CancelMessage', deviceId: D, outboxId: 'o1', now: NOW };
    it('cancels a queued message, and answers it', () => {
      given(queued(1))
        .when(cancel)
        .then([status(1, 'cancelled')], pending(1, { status: 'queued' }));
    });
    it('refuses a message being sent, or one not in the outbox', () => {
      given(queued(1), sending(1)).when(cancel).thenRefused('message_sending');
      given().when(cancel).thenRefused('not_found');
      given(queued(1), status(1, 'sent')).when(cancel).thenRefused('not_found');
    });
  });

  describe('ClearOutbox', () => {
    it('cancels only what is still queued', () => {
      given(queued(1), sending(1), queued(2), queued(3))
        .when({ type: 'ClearOutbox', deviceId: D, now: NOW })
        .then([status(2, 'cancelled'), status(3, 'cancelled')], [pending(2), pending(3)]);
    });
  });

  describe('DropOutbox', () => {
    it('cancels every pending message (those being sent too) and gives up every revoke', () => {
      const error = { code: 'device_deleted', message: 'the device was deleted' };
      given(queued(1), sending(1), queued(2), revokeRequested('V9'), revokeFailed('V9', 2))
        .when({ type: 'DropOutbox', deviceId: D, now: NOW })
        .then(
          [
            status(1, 'cancelled', error),
            status(2, 'cancelled', error),
            {
              type: 'OutboxRevokeFailed',
              data: { deviceId: D, waMessageId: 'V9', error, final: true, attempt: 2, retryAt: 0 },
            },
          ],
          [pending(1), pending(2)],
        );
    });
  });

  describe('ExpireMessages', () => {
    it('expires queued messages past their expiresAt, not one being sent nor one still in time', () => {
      const past = new Date(NOW - 1).toISOString();
      const future = new Date(NOW + 60_000).toISOString();
      const expired = { code: 'expired', message: `not sent before its expiresAt (${past})` };
      given(queued(1, { expiresAt: past }), queued(2, { expiresAt: future }), queued(3))
        .when({ type: 'ExpireMessages', deviceId: D, now: NOW })
        .then([status(1, 'expired', expired)], [pending(1)]);
      given(queued(4, { expiresAt: past }), sending(4))
        .when({ type: 'ExpireMessages', deviceId: D, now: NOW })
        .thenNothing([]);
    });
    it('expired is final: the message leaves the outbox', () => {
      const past = new Date(NOW - 1).toISOString();
      const { events } = given(queued(1, { expiresAt: past }))
        .when({ type: 'ExpireMessages', deviceId: D, now: NOW })
        .decision();
      expect(given(queued(1, { expiresAt: past }), ...events).state.messages.size).toBe(0);
    });
  });

  describe('StartSending', () => {
    const start: OutboxCommand = { type: 'StartSending', deviceId: D, outboxId: 'o1', now: NOW };
    it('records the try before sending, with the attempt number and when it started', () => {
      given(queued(1), sending(1), attemptFailed(1))
        .when(start)
        .then(
          [
            {
              type: 'OutboxMessageSending',
              data: { deviceId: D, outboxId: 'o1', waMessageId: 'W1', attempt: 2, startedAt: NOW },
            },
          ],
          { action: 'send', message: pending(1, { attempts: 1, failures: 1 }) },
        );
    });
    it('records sent instead of sending again a message a receipt already confirmed', () => {
      given(queued(1), sending(1), status(1, 'delivered'))
        .when(start)
        .then([status(1, 'sent')], { action: 'confirm', message: pending(1) });
    });
    it('records expired instead of sending late a message whose time ran out', () => {
      const past = new Date(NOW - 1).toISOString();
      given(queued(1, { expiresAt: past }))
        .when(start)
        .then([status(1, 'expired', { code: 'expired', message: `not sent before its expiresAt (${past})` })], {
          action: 'expired',
          message: pending(1),
        });
      given(queued(1, { expiresAt: new Date(NOW + 1).toISOString() }))
        .when(start)
        .then([expect.objectContaining({ type: 'OutboxMessageSending' })], { action: 'send', message: pending(1) });
    });
    it('skips a message that left the outbox', () => {
      given(queued(1), status(1, 'cancelled')).when(start).thenNothing({ action: 'skip' });
    });
  });

  describe('RecordSent and RecordFailed', () => {
    it('records the outcome of a try once', () => {
      given(queued(1), sending(1))
        .when({ type: 'RecordSent', deviceId: D, outboxId: 'o1', now: NOW })
        .then([status(1, 'sent')], true);
      given(queued(1), status(1, 'sent'))
        .when({ type: 'RecordSent', deviceId: D, outboxId: 'o1', now: NOW })
        .thenNothing(false);
      const error = { code: 'not_on_whatsapp', message: 'no such account' };
      given(queued(1), sending(1))
        .when({ type: 'RecordFailed', deviceId: D, outboxId: 'o1', error, now: NOW })
        .then([status(1, 'failed', error)], true);
      given().when({ type: 'RecordFailed', deviceId: D, outboxId: 'o1', error, now: NOW }).thenNothing(false);
    });
  });

  describe('RecordAttemptFailed', () => {
    it('records a failed try with its attempt and when to try again, once', () => {
      const error = { code: 'e', message: 'm' };
      const failed: OutboxCommand = {
        type: 'RecordAttemptFailed',
        deviceId: D,
        outboxId: 'o1',
        error,
        counted: true,
        retryAt: NOW + 5,
      };
      given(queued(1), sending(1))
        .when(failed)
        .then(
          [
            {
              type: 'OutboxAttemptFailed',
              data: {
                deviceId: D,
                outboxId: 'o1',
                waMessageId: 'W1',
                attempt: 1,
                error,
                counted: true,
                retryAt: NOW + 5,
              },
            },
          ],
          true,
        );
      given(queued(1), status(1, 'sent')).when(failed).thenNothing(false);
    });
  });

  describe('RecordReceipt', () => {
    const receipt = (s: Receipt['status'], error?: OutboxError): Receipt => ({
      waMessageId: 'W1',
      status: s,
      recipient: PEER,
      timestamp: 2,
      ...(error ? { error } : {}),
    });
    const record = (r: Receipt, sent?: { status: string } | null): OutboxCommand => ({
      type: 'RecordReceipt',
      deviceId: D,
      receipt: r,
      ...(sent === undefined ? {} : { sent: sent && { outboxId: 'o1', to: PEER, ...sent } }),
    });
    const recorded = (s: Receipt['status'], error?: OutboxError, outboxId: string | null = 'o1'): OutboxNewEvent => ({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown as string,
      type: 'MessageStatusChanged',
      data: {
        deviceId: D,
        waMessageId: 'W1',
        status: s,
        recipient: PEER,
        ...(outboxId ? { outboxId } : {}),
        timestamp: 2,
        ...(error ? { error } : {}),
      },
    });

    it('records a receipt with the outboxId of the message, under an id derived from the receipt', () => {
      given(queued(1), sending(1), status(1, 'sent'))
        .when(record(receipt('delivered')))
        .then([recorded('delivered')], { kind: 'recorded' });
      const a = given(queued(1))
        .when(record(receipt('delivered')))
        .decision().events[0].id;
      const b = given()
        .when(record(receipt('delivered'), null))
        .decision().events[0].id;
      expect(a).toBe(b);
    });
    it('drops a repeat, and a receipt that adds nothing to the status the message has', () => {
      given(queued(1), sending(1), status(1, 'sent'), status(1, 'delivered'))
        .when(record(receipt('delivered')))
        .thenNothing({ kind: 'repeat' });
      given()
        .when(record(receipt('delivered'), { status: 'read' }))
        .thenNothing({ kind: 'repeat' });
    });
    it('asks for the read model’s record of a message the outbox no longer remembers, and decides with it', () => {
      given()
        .when(record(receipt('delivered')))
        .thenNothing({ kind: 'look-up' });
      given()
        .when(record(receipt('read'), { status: 'delivered' }))
        .then([recorded('read')], { kind: 'recorded' });
      // Not sent through the outbox (from the phone): recorded without an outboxId.
      given()
        .when(record(receipt('read'), null))
        .then([recorded('read', undefined, null)], { kind: 'recorded' });
    });
    it('records a refusal after the send (a failed receipt) with its error, after sent or delivered, not once read', () => {
      const error = {
        code: 'refused_by_network',
        message: 'WhatsApp refused the message after it was sent (error 463)',
      };
      given(queued(1), sending(1), status(1, 'sent'))
        .when(record(receipt('failed', error)))
        .then([recorded('failed', error)], { kind: 'recorded' });
      given()
        .when(record(receipt('failed', error), { status: 'delivered' }))
        .then([recorded('failed', error)]);
      given()
        .when(record(receipt('failed', error), { status: 'read' }))
        .thenNothing({ kind: 'repeat' });
      // Once failed, later receipts change nothing, nor does the refusal repeated.
      const failed = [queued(1), sending(1), status(1, 'sent'), status(1, 'failed', error)];
      given(...failed)
        .when(record(receipt('failed', error)))
        .thenNothing({ kind: 'repeat' });
      given(...failed)
        .when(record(receipt('delivered')))
        .thenNothing({ kind: 'repeat' });
    });
  });

  describe('RequestRevoke', () => {
    it('asks for a revoke once', () => {
      const request: OutboxCommand = {
        type: 'RequestRevoke',
        deviceId: D,
        waMessageId: 'W9',
        to: PEER,
        outboxId: 'o9',
      };
      given()
        .when(request)
        .then([revokeRequested('W9', 'o9')], 'requested');
      given(revokeRequested('W9', 'o9')).when(request).thenNothing('already');
    });
  });

  describe('RecordRevoked and RecordRevokeFailed', () => {
    it('records the revoke done once', () => {
      given(revokeRequested('W9', 'o9'))
        .when({ type: 'RecordRevoked', deviceId: D, waMessageId: 'W9', now: NOW })
        .then([status(9, 'deleted')], true);
      given(revokeRequested('W9', 'o9'), status(9, 'deleted'))
        .when({ type: 'RecordRevoked', deviceId: D, waMessageId: 'W9', now: NOW })
        .thenNothing(false);
    });
    it('counts a failed revoke unless the session was offline, and gives it up when final', () => {
      const failed = (counted: boolean, final = false): OutboxCommand => ({
        type: 'RecordRevokeFailed',
        deviceId: D,
        waMessageId: 'W9',
        error: { code: 'e', message: 'm' },
        final,
        retryAt: NOW + 5,
        counted,
      });
      given(revokeRequested('W9'), revokeFailed('W9', 1))
        .when(failed(true))
        .then([revokeFailed('W9', 2)], true);
      given(revokeRequested('W9'), revokeFailed('W9', 1))
        .when(failed(false))
        .then([revokeFailed('W9', 1)], true);
      given(revokeRequested('W9'))
        .when(failed(true, true))
        .then([revokeFailed('W9', 1, true)], true);
      given(revokeRequested('W9'), revokeFailed('W9', 1, true))
        .when(failed(true))
        .thenNothing(false);
    });
  });

  describe('DeleteMessage (DELETE /send/:waMessageId)', () => {
    const del = (sent?: { status: string } | null): OutboxCommand => ({
      type: 'DeleteMessage',
      deviceId: D,
      waMessageId: 'W1',
      now: NOW,
      ...(sent === undefined ? {} : { sent: sent && { outboxId: 'o1', to: PEER, ...sent } }),
    });
    const decided = (status: DeleteOutcome['status'], cancelled?: PendingMessage) => ({
      kind: 'decided' as const,
      outcome: { status },
      ...(cancelled ? { cancelled } : {}),
    });

    it('cancels a message still queued, and refuses one being sent', () => {
      given(queued(1))
        .when(del())
        .then([status(1, 'cancelled')], decided('cancelled', pending(1) as PendingMessage));
      given(queued(1), sending(1)).when(del()).thenRefused('message_sending');
    });
    it('asks for the read model’s record of a message not in the outbox', () => {
      given(queued(1), sending(1), status(1, 'sent')).when(del()).thenNothing({ kind: 'look-up' });
    });
    it('revokes a sent message for everyone, once', () => {
      for (const sent of ['sent', 'delivered', 'read', 'played'])
        given()
          .when(del({ status: sent }))
          .then([revokeRequested('W1', 'o1')], decided('deleting'));
      given(revokeRequested('W1', 'o1'))
        .when(del({ status: 'read' }))
        .thenNothing(decided('deleting'));
    });
    it('answers what became of a message already gone, and refuses one that never went or is not readable yet', () => {
      given()
        .when(del({ status: 'cancelled' }))
        .thenNothing(decided('cancelled'));
      given()
        .when(del({ status: 'deleted' }))
        .thenNothing(decided('deleted'));
      given()
        .when(del({ status: 'failed' }))
        .thenRefused('message_failed');
      given()
        .when(del({ status: 'expired' }))
        .thenRefused('message_failed');
      given()
        .when(del({ status: 'sending' }))
        .thenRefused('message_sending');
      given().when(del(null)).thenRefused('not_found');
    });
  });

  describe('EditMessage (PATCH /send/:waMessageId)', () => {
    const editIds = { outboxId: 'oE', waMessageId: 'WE', createdAt: new Date(NOW).toISOString() };
    const edit = (seen?: Partial<SeenRecord> | null, text = 'new text'): OutboxCommand => ({
      type: 'EditMessage',
      deviceId: D,
      waMessageId: 'W1',
      text,
      now: NOW,
      edit: editIds,
      ...(seen === undefined
        ? {}
        : {
            seen: seen && {
              chatId: PEER,
              fromMe: true,
              outboxId: 'o1',
              content: { kind: 'text', text: 'old' },
              status: 'delivered',
              sentAt: SECONDS - 60,
              revoked: false,
              ...seen,
            },
          }),
    });

    it('replaces the text of a message still queued', () => {
      given(queued(1))
        .when(edit())
        .then(
          [{ type: 'OutboxMessageEdited', data: { deviceId: D, outboxId: 'o1', waMessageId: 'W1', text: 'new text' } }],
          {
            kind: 'decided',
            outcome: { status: 'edited' },
          },
        );
      given(queued(1), sending(1)).when(edit()).thenRefused('not_editable');
      given(queued(1, { content: { kind: 'location', latitude: 1, longitude: 2 } }))
        .when(edit())
        .thenRefused('not_editable');
    });
    it('asks for what the message index knows of a message not in the outbox', () => {
      given().when(edit()).thenNothing({ kind: 'look-up' });
    });
    it('edits a message sent within 15 minutes for everyone, by queuing an edit', () => {
      given(queued(1), status(1, 'sent'), queued(2))
        .when(edit({}))
        .then(
          [
            {
              type: 'OutboxMessageQueued',
              data: {
                deviceId: D,
                ...editIds,
                to: PEER,
                content: { kind: 'edit', messageId: 'W1', text: 'new text' },
                seq: 3,
              },
            },
          ],
          { kind: 'decided', outcome: { status: 'editing' } },
        );
    });
    it('refuses a message not seen, not sent from here, not sent yet, revoked, without text, or sent too long ago', () => {
      given().when(edit(null)).thenRefused('message_not_found');
      given()
        .when(edit({ fromMe: false }))
        .thenRefused('not_editable');
      given()
        .when(edit({ outboxId: undefined }))
        .thenRefused('not_editable');
      given()
        .when(edit({ content: { kind: 'location', latitude: 1, longitude: 2 } }))
        .thenRefused('not_editable');
      given()
        .when(edit({ status: 'failed' }))
        .thenRefused('not_editable');
      given()
        .when(edit({ revoked: true }))
        .thenRefused('not_editable');
      given()
        .when(edit({ sentAt: undefined }))
        .thenRefused('not_editable');
      given()
        .when(edit({ sentAt: Math.floor((NOW - EDIT_WINDOW_MS) / 1000) - 1 }))
        .thenRefused('not_editable');
    });
  });
});
