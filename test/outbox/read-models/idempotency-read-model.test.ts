/**
 * The idempotency read model (src/outbox/read-models/idempotency-read-model.ts), fed events directly: the
 * Idempotency-Key of each queued send with its request's digest and its answer, a key used again, the keys
 * older than their period, and the outbox's two read models fed together as one projection, as the runner does.
 */
import { describe, expect, it } from 'vitest';
import { CombinedProjection } from '../../../src/outbox/read-models/sending-projection.js';
import { IdempotencyReadModel } from '../../../src/outbox/read-models/idempotency-read-model.js';
import { OutboxReadModel } from '../../../src/outbox/read-models/outbox-read-model.js';
import type { OutboxEvent } from '../../../src/outbox/stream/outbox-events.js';
import { type GivenEvent, readModelSpecification } from '../../support/read-model-specification.js';

const spec = readModelSpecification<OutboxEvent, IdempotencyReadModel>((db) => new IdempotencyReadModel(db));

const TO = '4915100000001';
const at = (time: string) => Date.parse(time);

/** A send queued at `time` (when the store recorded it), with an Idempotency-Key unless `key` is undefined. */
const queued = (
  deviceId: string,
  seq: number,
  time: string,
  key: string | undefined,
  options: { fingerprint?: string; expiresAt?: string } = {},
): GivenEvent<OutboxEvent> => ({
  type: 'OutboxMessageQueued',
  data: {
    deviceId,
    outboxId: `o${seq}`,
    waMessageId: `W${seq}`,
    to: TO,
    seq,
    content: { kind: 'text', text: `message ${seq}` },
    createdAt: time,
    ...(key === undefined ? {} : { idempotency: { key, fingerprint: options.fingerprint ?? `fingerprint-${seq}` } }),
    ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
  },
  createdAt: new Date(time),
});

describe('idempotency read model', () => {
  it("keeps a send's key with its request's digest, its answer and when it came, per device", () => {
    spec
      .given(
        queued('d1', 1, '2026-01-01T10:00:00.000Z', 'key-1'),
        queued('d1', 2, '2026-01-01T10:00:01.000Z', undefined),
        queued('d2', 3, '2026-01-01T10:00:02.000Z', 'key-1'),
      )
      .then((keys) => keys.find('d1', 'key-1', 0), {
        fingerprint: 'fingerprint-1',
        answer: {
          outboxId: 'o1',
          waMessageId: 'W1',
          status: 'queued',
          kind: 'text',
          to: TO,
          createdAt: '2026-01-01T10:00:00.000Z',
        },
        createdAt: at('2026-01-01T10:00:00.000Z'),
      })
      .then((keys) => keys.find('d2', 'key-1', 0)?.answer.outboxId, 'o3')
      .then((keys) => keys.find('d1', 'key-2', 0), undefined)
      .then((keys) => keys.find('d3', 'key-1', 0), undefined);
  });

  it('answers the expiry a send was given', () => {
    spec
      .given(queued('d1', 1, '2026-01-01T10:00:00.000Z', 'key-1', { expiresAt: '2026-01-01T11:00:00.000Z' }))
      .then((keys) => keys.find('d1', 'key-1', 0)?.answer.expiresAt, '2026-01-01T11:00:00.000Z');
  });

  it('answers a key only when it was used since the time asked about', () => {
    spec
      .given(queued('d1', 1, '2026-01-01T10:00:00.000Z', 'key-1'))
      .then((keys) => keys.find('d1', 'key-1', at('2026-01-01T10:00:00.000Z'))?.answer.outboxId, 'o1')
      .then((keys) => keys.find('d1', 'key-1', at('2026-01-01T10:00:00.001Z')), undefined);
  });

  it('gives a key used again to the newer request, whichever order the two were recorded in', () => {
    spec
      .given(queued('d1', 1, '2026-01-01T10:00:00.000Z', 'key-1', { fingerprint: 'first' }))
      .given(queued('d1', 2, '2026-01-02T10:00:00.000Z', 'key-1', { fingerprint: 'second' }))
      .then((keys) => keys.find('d1', 'key-1', 0), expect.objectContaining({ fingerprint: 'second' }))
      // Another process with a clock behind recorded an older use later: the newer one stays.
      .given(queued('d1', 3, '2026-01-01T12:00:00.000Z', 'key-1', { fingerprint: 'late' }))
      .then((keys) => keys.find('d1', 'key-1', 0)?.answer.outboxId, 'o2');
  });

  it('forgets the keys used before a time, and answers how many', () => {
    spec
      .given(
        queued('d1', 1, '2026-01-01T10:00:00.000Z', 'key-1'),
        queued('d1', 2, '2026-01-01T11:00:00.000Z', 'key-2'),
        queued('d2', 3, '2026-01-01T12:00:00.000Z', 'key-3'),
      )
      .then((keys) => keys.prune(at('2026-01-01T11:00:00.000Z')), 1)
      .then((keys) => keys.find('d1', 'key-1', 0), undefined)
      .then((keys) => keys.find('d1', 'key-2', 0)?.answer.outboxId, 'o2')
      .then((keys) => keys.prune(at('2026-01-01T11:00:00.000Z')), 0);
  });

  it('is fed with the outbox read model as the one `sending` projection, each answering what it keeps', () => {
    const sending = readModelSpecification<
      OutboxEvent,
      CombinedProjection & { keys: IdempotencyReadModel; outbox: OutboxReadModel }
    >((db) => {
      const outbox = new OutboxReadModel(db);
      const keys = new IdempotencyReadModel(db);
      return Object.assign(new CombinedProjection('sending', [outbox, keys]), { outbox, keys });
    });
    sending
      .given(
        queued('d1', 1, '2026-01-01T10:00:00.000Z', 'key-1'),
        queued('d1', 2, '2026-01-01T10:00:01.000Z', undefined),
      )
      .given({
        type: 'OutboxMessageSending',
        data: { deviceId: 'd1', outboxId: 'o1', waMessageId: 'W1', attempt: 1 },
      })
      .then((models) => models.keys.find('d1', 'key-1', 0)?.answer.outboxId, 'o1')
      .then(
        (models) => models.outbox.pending('d1', { limit: 10 }).items.map((item) => [item.outboxId, item.status]),
        [
          ['o1', 'sending'],
          ['o2', 'queued'],
        ],
      );
  });
});
