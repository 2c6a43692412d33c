/**
 * Fetches a `url` media when its message is sent: through the outbound network guard (every address
 * dialled is checked at connect time, redirects included, so no redirect leads to a private address),
 * streamed to disk with a size cap and timeouts, never buffered whole in memory.
 */
import { createWriteStream } from 'node:fs';
import type { LookupFunction } from 'node:net';
import { rm } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Got } from 'got';
import { type OutboundGuard, isDestinationRefused } from '../net/outbound-guard.js';
import { createOutboundHttp } from '../net/outbound-http.js';

/** Why a media could not be had, in one stable word (the failed message's `error.reason`). */
export const MEDIA_UNAVAILABLE_REASONS = [
  'http_status',
  'dns_failure',
  'connect_failed',
  'timeout',
  'too_large',
  'wrong_type',
  'refused',
  'empty',
  'too_many_redirects',
  'missing_file',
  'fetch_failed',
] as const;
export type MediaUnavailableReason = (typeof MEDIA_UNAVAILABLE_REASONS)[number];

/** The media cannot be had: a permanent failure of the message (`media_unavailable`), with the reason. */
export class MediaUnavailableError extends Error {
  override readonly name = 'MediaUnavailableError';
  readonly code = 'media_unavailable';

  constructor(
    message: string,
    readonly reason: MediaUnavailableReason,
  ) {
    super(message);
  }
}

export interface FetchedMedia {
  size: number;
  /** The server's Content-Type, without parameters, when it sent one. */
  contentType?: string;
}

const MAX_REDIRECTS = 5;

export class MediaFetcher {
  private readonly http: Got;

  constructor(
    private readonly guard: OutboundGuard,
    timeoutMs: number,
    /** Name resolution (default: the system's); the guard judges whatever addresses it gives. */
    dnsLookup?: LookupFunction,
  ) {
    this.http = createOutboundHttp(guard, { timeoutMs }).extend({
      ...(dnsLookup ? { dnsLookup } : {}),
      followRedirect: true,
      maxRedirects: MAX_REDIRECTS,
      timeout: { lookup: 10_000, connect: 10_000, secureConnect: 10_000, socket: 30_000, request: timeoutMs },
      // The agent judges every address dialled; this refuses a redirect to a private IP literal before trying it.
      hooks: { beforeRedirect: [(options) => guard.assertAllowed(options.url as URL)] },
    });
  }

  /** Streams `url` into `destination`; throws MediaUnavailableError (and leaves no file) on any failure. */
  async fetchTo(url: string, destination: string, maxBytes: number): Promise<FetchedMedia> {
    const refusal = this.guard.refusalOf(url);
    if (refusal) throw new MediaUnavailableError(`destination refused: the URL ${refusal}`, 'refused');
    let contentType: string | undefined;
    let size = 0;
    const request = this.http.stream(url);
    request.once(
      'response',
      (response: { statusCode: number; headers: Record<string, string | string[] | undefined> }) => {
        if (response.statusCode < 200 || response.statusCode >= 300) {
          request.destroy(
            new MediaUnavailableError(`the media URL answered HTTP ${response.statusCode}`, 'http_status'),
          );
          return;
        }
        const length = Number(response.headers['content-length']);
        if (Number.isFinite(length) && length > maxBytes) {
          request.destroy(
            new MediaUnavailableError(`the media is ${length} bytes, more than the limit of ${maxBytes}`, 'too_large'),
          );
          return;
        }
        const type = response.headers['content-type'];
        if (typeof type === 'string') contentType = type.split(';')[0].trim().toLowerCase() || undefined;
      },
    );
    const cap = new Transform({
      transform(chunk: Buffer, _encoding, callback: TransformCallback) {
        size += chunk.length;
        if (size > maxBytes)
          callback(new MediaUnavailableError(`the media is more than the limit of ${maxBytes} bytes`, 'too_large'));
        else callback(null, chunk);
      },
    });
    try {
      await pipeline(request, cap, createWriteStream(destination, { mode: 0o600 }));
    } catch (error) {
      await rm(destination, { force: true });
      throw asMediaUnavailable(error);
    }
    if (size === 0) {
      await rm(destination, { force: true });
      throw new MediaUnavailableError('the media URL answered an empty body', 'empty');
    }
    return { size, ...(contentType ? { contentType } : {}) };
  }
}

function asMediaUnavailable(error: unknown): MediaUnavailableError {
  if (error instanceof MediaUnavailableError) return error;
  // got wraps what destroyed its stream (our own refusals included) in a RequestError, keeping it as the cause.
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  if (cause instanceof MediaUnavailableError) return cause;
  if (
    cause !== undefined &&
    cause !== error &&
    (error as { name?: string }).name === 'RequestError' &&
    (cause as { code?: string }).code
  ) {
    error = cause;
  }
  if (isDestinationRefused(error))
    return new MediaUnavailableError(
      'destination refused: the media URL leads to an address that is not allowed',
      'refused',
    );
  const { code, name, message } = (error ?? {}) as { code?: string; name?: string; message?: string };
  if (name === 'TimeoutError' || code === 'ETIMEDOUT')
    return new MediaUnavailableError('fetching the media URL timed out', 'timeout');
  if (name === 'MaxRedirectsError')
    return new MediaUnavailableError(`the media URL redirected more than ${MAX_REDIRECTS} times`, 'too_many_redirects');
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new MediaUnavailableError(`the media URL's host name could not be resolved (${code})`, 'dns_failure');
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') {
    return new MediaUnavailableError(`the media URL's server could not be reached (${code})`, 'connect_failed');
  }
  return new MediaUnavailableError(
    `the media URL could not be fetched: ${code ?? message ?? String(error)}`,
    'fetch_failed',
  );
}
