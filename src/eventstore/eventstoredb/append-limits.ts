/**
 * The server's size limits, known before an append is sent: set by configuration (EVENTSTORE_MAX_APPEND_BYTES,
 * EVENTSTORE_MAX_EVENT_BYTES: the server's MaxAppendSize and MaxAppendEventSize, which differ by release and may
 * be set by its operator), and learned from the server where it says them: a refusal names the limit it met, and
 * later appends over it are refused here, before they cross the wire. KurrentDB tells its options only over HTTP
 * (`/info/options`, to its ops and admins), which the gateway does not call.
 */
import { StoreRefusedError } from '../event-store.js';

export interface AppendLimitSettings {
  /** Bytes of one append (every event), 0: only the server's. */
  maxAppendBytes?: number;
  /** Bytes of one event, 0: only the server's. */
  maxEventBytes?: number;
}

/** The limit a refusal met, as the server named it. */
export interface NamedLimit {
  kind: 'append' | 'event';
  bytes: number;
}

/** A StoreRefusedError `append_too_large` carrying the limit the server named (learned by AppendLimits). */
export function refusedOverLimit(message: string, limit: NamedLimit | undefined, cause: unknown): StoreRefusedError {
  return Object.assign(new StoreRefusedError('append_too_large', message, { cause }), { limit });
}

/** An event's size as the server counts it (Data/Event.cs SizeOnDisk): data, metadata and twice its type. */
function sizeOf(event: { type: string; data: unknown; metadata?: Record<string, unknown> }): number {
  const metadata = event.metadata === undefined ? 0 : Buffer.byteLength(JSON.stringify(event.metadata));
  return Buffer.byteLength(JSON.stringify(event.data ?? null)) + metadata + event.type.length * 2;
}

export class AppendLimits {
  private appendBytes: number;
  private eventBytes: number;

  constructor(settings: AppendLimitSettings = {}) {
    this.appendBytes = settings.maxAppendBytes || Number.POSITIVE_INFINITY;
    this.eventBytes = settings.maxEventBytes || Number.POSITIVE_INFINITY;
  }

  /** Refuses (append_too_large, 413) events over a known limit, before anything is sent. */
  check(streamId: string, events: ReadonlyArray<{ type: string; data: unknown; metadata?: Record<string, unknown> }>) {
    let total = 0;
    for (const event of events) {
      const size = sizeOf(event);
      if (size > this.eventBytes)
        throw refusedOverLimit(
          `append to ${streamId}: an event of ${size} bytes, over the event store's limit for one event (${this.eventBytes} bytes)`,
          undefined,
          undefined,
        );
      total += size;
    }
    if (total > this.appendBytes)
      throw refusedOverLimit(
        `append to ${streamId}: ${total} bytes, over the event store's limit for one append (${this.appendBytes} bytes)`,
        undefined,
        undefined,
      );
  }

  /** A refusal that named the server's limit lowers the known one; answers the error. */
  learned(error: unknown): unknown {
    const limit = (error as { limit?: NamedLimit } | null)?.limit;
    if (!limit || !(limit.bytes > 0)) return error;
    if (limit.kind === 'append') this.appendBytes = Math.min(this.appendBytes, limit.bytes);
    else this.eventBytes = Math.min(this.eventBytes, limit.bytes);
    return error;
  }
}
