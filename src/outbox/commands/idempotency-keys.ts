/**
 * Idempotency-Key handling for sends: a request that repeats a key (per device, within the TTL) gets the
 * first request's answer instead of queuing again. Requests racing with the same key wait for the first;
 * after that the answer comes from the read model, which the first request's append fed before it was
 * answered (read-your-writes), and which survives restarts.
 */
import { createHash } from 'node:crypto';
import { stringify as stableStringify } from 'safe-stable-stringify';
import { DomainError, invalidField } from '../../errors/domain-error.js';
import type { QueuedAnswer } from '../stream/outbox-events.js';
import type { IdempotencyReadModel } from '../read-models/idempotency-read-model.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/**
 * What a request asks, reduced to digests: the same key with another request is refused. `fingerprint` is of its
 * fields in a stable order (keys sorted at every depth), so that the same request with its JSON fields in another
 * order is the same request; `legacy` is how fingerprints were made before (the fields in the order the client
 * sent them), still recognised for keys recorded then, within IDEMPOTENCY_TTL of an upgrade.
 */
export interface RequestFingerprints {
  fingerprint: string;
  legacy: string;
}

const digestOf = (json: string | undefined) =>
  createHash('sha256')
    .update(json ?? '')
    .digest('base64url');

export function fingerprintsOf(request: unknown): RequestFingerprints {
  return { fingerprint: digestOf(stableStringify(request)), legacy: digestOf(JSON.stringify(request)) };
}

/** Whether a recorded fingerprint is of this request. */
export const isSameRequest = (recorded: string, request: RequestFingerprints): boolean =>
  recorded === request.fingerprint || recorded === request.legacy;

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
  new DomainError(
    'idempotency_key_reused',
    'this Idempotency-Key was already used with a different request; use a new key for a new request',
  );

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
  async once(
    deviceId: string,
    key: string,
    request: RequestFingerprints,
    queue: () => Promise<QueuedAnswer>,
  ): Promise<QueuedAnswer> {
    this.pruneNowAndThen();
    const slot = `${deviceId}\n${key}`;
    const racing = this.inFlight.get(slot);
    if (racing) {
      if (racing.fingerprint !== request.fingerprint) throw keyReused();
      return racing.answer;
    }
    const recorded = this.records.find(deviceId, key, this.now() - this.ttlMs);
    if (recorded) {
      if (!isSameRequest(recorded.fingerprint, request)) throw keyReused();
      return recorded.answer;
    }
    const answer = queue();
    this.inFlight.set(slot, { fingerprint: request.fingerprint, answer });
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
