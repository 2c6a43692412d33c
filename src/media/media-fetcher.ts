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

/** The media cannot be had: a permanent failure of the message (`media_unavailable`). */
export class MediaUnavailableError extends Error {
  override readonly name = 'MediaUnavailableError';
  readonly code = 'media_unavailable';
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
    if (refusal) throw new MediaUnavailableError(`destination refused: the URL ${refusal}`);
    let contentType: string | undefined;
    let size = 0;
    const request = this.http.stream(url);
    request.once('response', (response: { statusCode: number; headers: Record<string, string | string[] | undefined> }) => {
      if (response.statusCode < 200 || response.statusCode >= 300) {
        request.destroy(new MediaUnavailableError(`the media URL answered HTTP ${response.statusCode}`));
        return;
      }
      const length = Number(response.headers['content-length']);
      if (Number.isFinite(length) && length > maxBytes) {
        request.destroy(new MediaUnavailableError(`the media is ${length} bytes, more than the limit of ${maxBytes}`));
        return;
      }
      const type = response.headers['content-type'];
      if (typeof type === 'string') contentType = type.split(';')[0]!.trim().toLowerCase() || undefined;
    });
    const cap = new Transform({
      transform(chunk: Buffer, _encoding, callback: TransformCallback) {
        size += chunk.length;
        if (size > maxBytes) callback(new MediaUnavailableError(`the media is more than the limit of ${maxBytes} bytes`));
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
      throw new MediaUnavailableError('the media URL answered an empty body');
    }
    return { size, ...(contentType ? { contentType } : {}) };
  }
}

function asMediaUnavailable(error: unknown): MediaUnavailableError {
  if (error instanceof MediaUnavailableError) return error;
  if (isDestinationRefused(error)) return new MediaUnavailableError('destination refused: the media URL leads to an address that is not allowed');
  const { code, name, message } = (error ?? {}) as { code?: string; name?: string; message?: string };
  if (name === 'TimeoutError' || code === 'ETIMEDOUT') return new MediaUnavailableError('fetching the media URL timed out');
  if (name === 'MaxRedirectsError') return new MediaUnavailableError(`the media URL redirected more than ${MAX_REDIRECTS} times`);
  return new MediaUnavailableError(`the media URL could not be fetched: ${code ?? message ?? String(error)}`);
}
