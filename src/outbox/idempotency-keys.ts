/**
 * Idempotency-Key handling for sends: a request that repeats a key (per device, within the TTL) gets the
 * first request's answer instead of queuing again. Requests racing with the same key wait for the first;
 * after that the answer comes from the read model, which the first request's append fed before it was
 * answered (read-your-writes), and which survives restarts.
 */
import { createHash } from 'node:crypto';
import { DomainError, invalidField } from '../errors/domain-error.js';
import type { QueuedAnswer } from './outbox-events.js';
import type { IdempotencyReadModel } from './idempotency-read-model.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** What a request asks, reduced to a digest: the same key with another request is refused. */
export function fingerprintOf(request: unknown): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('base64url');
}

/** The header's value, checked: 1..255 visible ASCII characters (spaces allowed inside). */
export function parseIdempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (value.length > IDEMPOTENCY_KEY_MAX_LENGTH || !/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value)) {
    const message = `must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters`;
    throw invalidField('/headers/idempotency-key', message, `header Idempotency-Key ${message}`);
  }
  return value;
}

const keyReused = () =>
  new DomainError('idempotency_key_reused', 'this Idempotency-Key was already used with a different request; use a new key for a new request');

interface InFlight {
  fingerprint: string;
  answer: Promise<QueuedAnswer>;
}

export class IdempotencyKeys {
  private readonly inFlight = new Map<string, InFlight>();
  private lastPrune = 0;

  constructor(
    private readonly records: IdempotencyReadModel,
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Runs `queue` unless the key was already used: then answers what the first request was answered.
   * `queue` must record the key with the message (OutboxMessageQueued.idempotency) and wait for the
   * read models to include it before resolving.
   */
  async once(deviceId: string, key: string, fingerprint: string, queue: () => Promise<QueuedAnswer>): Promise<QueuedAnswer> {
    this.pruneNowAndThen();
    const slot = `${deviceId}\n${key}`;
    const racing = this.inFlight.get(slot);
    if (racing) {
      if (racing.fingerprint !== fingerprint) throw keyReused();
      return racing.answer;
    }
    const recorded = this.records.find(deviceId, key, this.now() - this.ttlMs);
    if (recorded) {
      if (recorded.fingerprint !== fingerprint) throw keyReused();
      return recorded.answer;
    }
    const answer = queue();
    this.inFlight.set(slot, { fingerprint, answer });
    try {
      return await answer;
    } finally {
      this.inFlight.delete(slot);
    }
  }

  /** Expired keys leave the table about once an hour (the lookup ignores them anyway). */
  private pruneNowAndThen(): void {
    const now = this.now();
    if (now - this.lastPrune < 3_600_000) return;
    this.lastPrune = now;
    this.records.prune(now - this.ttlMs);
  }
}
