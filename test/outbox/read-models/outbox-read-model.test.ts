/**
 * The outbox read model (src/outbox/read-models/outbox-read-model.ts), fed events directly: a message's life
 * from queued to read (or failed, cancelled, expired), what GET /outbox pages, the receipts still owed, the
 * lookups by waMessageId, the gauges and the devices the drainer and the expiry sweep start with. Its rows
 * are held in memory across batches (src/projections/row-buffer.ts): a batch that rolls back must leave none.
 */
import { describe, expect, it } from 'vitest';
import type { MessageStatusChangedData } from '../../../src/messages/message-events.js';
import { OutboxReadModel } from '../../../src/outbox/read-models/outbox-read-model.js';
import type { OutboxError, OutboxEvent, QueuedContent } from '../../../src/outbox/stream/outbox-events.js';
import { readModelSpecification } from '../../support/read-model-specification.js';

const spec = readModelSpecification<OutboxEvent, OutboxReadModel>((db) => new OutboxReadModel(db));

const TO = '4915100000001';
const createdAt = (seq: number) => `2026-01-01T00:00:0${seq}.000Z`;

const queued = (
  deviceId: string,
  seq: number,
  options: { content?: QueuedContent; expiresAt?: string; waMessageId?: string } = {},
): OutboxEvent => ({
  type: 'OutboxMessageQueued',
  data: {
    deviceId,
    outboxId: `o${seq}`,
    waMessageId: options.waMessageId ?? `W${seq}`,
    to: TO,
    seq,
    content: options.content ?? { kind: 'text', text: `message ${seq}` },
    createdAt: createdAt(seq),
    ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
  },
});
const sending = (deviceId: string, seq: number, attempt = 1): OutboxEvent => ({
  type: 'OutboxMessageSending',
  data: { deviceId, outboxId: `o${seq}`, waMessageId: `W${seq}`, attempt, startedAt: 0 },
});
const attemptFailed = (deviceId: string, seq: number, error: OutboxError, attempt = 1): OutboxEvent => ({
  type: 'OutboxAttemptFailed',
  data: { deviceId, outboxId: `o${seq}`, waMessageId: `W${seq}`, attempt, error, counted: true, retryAt: 0 },
});
/** A status as the outbox records it (with its outboxId), or as a receipt reports it (`receipt`: without). */
const status = (
  deviceId: string,
  seq: number,
  next: MessageStatusChangedData['status'],
  options: { receipt?: boolean; error?: MessageStatusChangedData['error'] } = {},
): OutboxEvent => ({
  type: 'MessageStatusChanged',
  data: {
    deviceId,
    waMessageId: `W${seq}`,
    status: next,
    recipient: TO,
    timestamp: 1_767_225_600 + seq,
    ...(options.receipt ? {} : { outboxId: `o${seq}` }),
    ...(options.error ? { error: options.error } : {}),
  },
});

const ids = (page: { items: Array<{ outboxId: string }>; nextAfterSeq: number | null }) => ({
  ids: page.items.map((item) => item.outboxId),
  nextAfterSeq: page.nextAfterSeq,
});

describe('outbox read model', () => {
  it('pages the messages waiting, oldest first, and answers each as GET /outbox does', () => {
    spec
      .given(queued('d1', 1), queued('d1', 2, { expiresAt: '2026-01-02T00:00:00.000Z' }), queued('d2', 3))
      .given(queued('d1', 4, { content: { kind: 'location', latitude: 52.5, longitude: 13.4 } }))
      .then((outbox) => ids(outbox.pending('d1', { limit: 2 })), { ids: ['o1', 'o2'], nextAfterSeq: 2 })
      .then((outbox) => ids(outbox.pending('d1', { limit: 2, afterSeq: 2 })), { ids: ['o4'], nextAfterSeq: null })
      .then(
        (outbox) => outbox.pending('d1', { limit: 10 }).items.slice(1),
        [
          {
            outboxId: 'o2',
            waMessageId: 'W2',
            kind: 'text',
            to: TO,
            status: 'queued',
            attempts: 0,
            createdAt: createdAt(2),
            expiresAt: '2026-01-02T00:00:00.000Z',
          },
          {
            outboxId: 'o4',
            waMessageId: 'W4',
            kind: 'location',
            to: TO,
            status: 'queued',
            attempts: 0,
            createdAt: createdAt(4),
          },
        ],
      )
      .then((outbox) => ids(outbox.pending('d2', { limit: 10 })), { ids: ['o3'], nextAfterSeq: null })
      .then((outbox) => ids(outbox.pending('nobody', { limit: 10 })), { ids: [], nextAfterSeq: null });
  });

  it('follows tries: sending with its attempt, back to queued with the error of a failed one', () => {
    const offline: OutboxError = { code: 'session_offline', message: 'the session went offline' };
    spec
      .given(queued('d1', 1), sending('d1', 1))
      .then(
        (outbox) => outbox.pending('d1', { limit: 1 }).items[0],
        expect.objectContaining({ status: 'sending', attempts: 1 }),
      )
      .given(attemptFailed('d1', 1, offline))
      .then(
        (outbox) => outbox.pending('d1', { limit: 1 }).items[0],
        expect.objectContaining({ status: 'queued', attempts: 1, lastError: offline }),
      )
      .given(sending('d1', 1, 2))
      .then(
        (outbox) => outbox.pending('d1', { limit: 1 }).items[0],
        expect.objectContaining({ status: 'sending', attempts: 2, lastError: offline }),
      )
      .then((outbox) => outbox.depth(), [{ status: 'sending', count: 1 }]);
  });

  it('moves a sent message forward with its receipts only, and lists it as owed receipts until read', () => {
    spec
      .given(queued('d1', 1), sending('d1', 1), status('d1', 1, 'sent'), queued('d1', 2), sending('d1', 2))
      .given(status('d1', 2, 'sent'), status('d1', 2, 'delivered', { receipt: true }))
      .then((outbox) => outbox.unconfirmed('d1', { limit: 10 }), {
        items: [
          { waMessageId: 'W1', to: TO, status: 'sent' },
          { waMessageId: 'W2', to: TO, status: 'delivered' },
        ],
        nextAfterSeq: null,
      })
      .then((outbox) => outbox.unconfirmed('d1', { limit: 1 }).nextAfterSeq, 1)
      .then((outbox) => outbox.isPending('d1', 'o1'), false)
      .then((outbox) => ids(outbox.pending('d1', { limit: 10 })), { ids: [], nextAfterSeq: null })
      .given(status('d1', 2, 'read', { receipt: true }), status('d1', 2, 'delivered', { receipt: true }))
      .then((outbox) => outbox.byWaMessageId('d1', 'W2'), {
        outboxId: 'o2',
        waMessageId: 'W2',
        kind: 'text',
        to: TO,
        status: 'read',
      })
      .then((outbox) => outbox.unconfirmed('d1', { limit: 10 }).items.map((item) => item.waMessageId), ['W1']);
  });

  it('finds the message of a receipt without outboxId by its waMessageId, in the batch that queued it or later', () => {
    spec
      .given(
        queued('d1', 1),
        sending('d1', 1),
        status('d1', 1, 'sent'),
        status('d1', 1, 'delivered', { receipt: true }),
      )
      .then((outbox) => outbox.byWaMessageId('d1', 'W1')?.status, 'delivered')
      .given(status('d1', 1, 'played', { receipt: true }))
      .then((outbox) => outbox.byWaMessageId('d1', 'W1')?.status, 'played')
      // A receipt of a message this outbox never sent (from the phone) changes nothing.
      .given(status('d1', 9, 'read', { receipt: true }))
      .then((outbox) => outbox.byWaMessageId('d1', 'W9'), undefined)
      .then((outbox) => outbox.byWaMessageId('d2', 'W1'), undefined);
  });

  it('keeps a failure, a cancel or an expiry final, and a server refusal after sent with its error', () => {
    const refused = { code: 'send_refused', message: 'the server refused the message' };
    spec
      .given(queued('d1', 1), queued('d1', 2), queued('d1', 3), sending('d1', 3))
      .given(status('d1', 1, 'cancelled'), status('d1', 2, 'expired'), status('d1', 3, 'sent'))
      .given(status('d1', 3, 'failed', { receipt: true, error: refused }))
      .given(sending('d1', 1, 2), status('d1', 2, 'sent'), status('d1', 3, 'delivered', { receipt: true }))
      .then(
        (outbox) => ['W1', 'W2', 'W3'].map((id) => outbox.byWaMessageId('d1', id)?.status),
        ['cancelled', 'expired', 'failed'],
      )
      .then((outbox) => outbox.devicesWithPending(), [])
      .then((outbox) => outbox.depth(), [])
      .then((outbox) => outbox.unconfirmed('d1', { limit: 10 }).items, []);
  });

  it('keeps the first of a message queued twice under one outboxId', () => {
    spec
      .given(queued('d1', 1))
      .given(queued('d1', 1, { waMessageId: 'W-other' }))
      .then((outbox) => outbox.pending('d1', { limit: 10 }).items.map((item) => item.waMessageId), ['W1'])
      .then((outbox) => outbox.byWaMessageId('d1', 'W-other'), undefined);
  });

  it('names the devices with messages waiting, and those with a queued message past its expiry', () => {
    spec
      .given(
        queued('d1', 1, { expiresAt: '2026-01-01T01:00:00.000Z' }),
        queued('d2', 2, { expiresAt: '2026-01-01T03:00:00.000Z' }),
        queued('d3', 3),
        queued('d4', 4, { expiresAt: '2026-01-01T00:30:00.000Z' }),
      )
      .given(sending('d4', 4), status('d3', 3, 'cancelled'))
      .then((outbox) => outbox.devicesWithPending().sort(), ['d1', 'd2', 'd4'])
      .then((outbox) => outbox.devicesWithExpired(Date.parse('2026-01-01T02:00:00.000Z')), ['d1'])
      .then((outbox) => outbox.devicesWithExpired(Date.parse('2026-01-01T03:00:00.000Z')).sort(), ['d1', 'd2'])
      .then((outbox) => outbox.isPending('d3', 'o3'), false)
      .then((outbox) => outbox.isPending('d4', 'o4'), true)
      .then(
        (outbox) => outbox.depth().sort((a, b) => a.status.localeCompare(b.status)),
        [
          { status: 'queued', count: 2 },
          { status: 'sending', count: 1 },
        ],
      );
  });

  it('forgets what a batch that rolled back held: applied again, it lands as if applied once', () => {
    spec
      .given(queued('d1', 1))
      .givenRetried(sending('d1', 1), status('d1', 1, 'sent'), queued('d1', 2))
      .then((outbox) => outbox.byWaMessageId('d1', 'W1')?.status, 'sent')
      .then((outbox) => ids(outbox.pending('d1', { limit: 10 })), { ids: ['o2'], nextAfterSeq: null })
      .givenRetried(sending('d1', 2), attemptFailed('d1', 2, { code: 'engine_error', message: 'x' }))
      .then(
        (outbox) => outbox.pending('d1', { limit: 10 }).items,
        [
          expect.objectContaining({
            outboxId: 'o2',
            status: 'queued',
            attempts: 1,
            lastError: { code: 'engine_error', message: 'x' },
          }),
        ],
      );
  });
});
