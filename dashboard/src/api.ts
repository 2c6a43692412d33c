import { createParser } from 'eventsource-parser';

/** A problem+json answer (or a network failure, status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Envelope {
  id: string;
  event: string;
  deviceId: string;
  timestamp: string;
  data: Record<string, any>;
}

export interface StreamEvent {
  position: number;
  envelope: Envelope;
}

/** The admin key travels only in a header, never in a URL. */
const headersFor = (key: string, json: boolean): Record<string, string> => ({
  'X-Admin-Key': key,
  ...(json ? { 'Content-Type': 'application/json' } : {}),
});

async function problemOf(response: Response): Promise<ApiError> {
  let code = 'error';
  let detail = response.statusText;
  try {
    const body = await response.json();
    code = body.code ?? code;
    detail = body.detail ?? body.title ?? detail;
  } catch {
    // not JSON: keep the status text
  }
  return new ApiError(response.status, code, detail);
}

export async function call<T = any>(key: string, method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: headersFor(key, body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new ApiError(0, 'network', `the gateway cannot be reached (${(error as Error).message})`);
  }
  if (!response.ok) throw await problemOf(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

export async function fetchBlob(key: string, path: string): Promise<Blob> {
  const response = await fetch(path, { headers: headersFor(key, false) });
  if (!response.ok) throw await problemOf(response);
  return response.blob();
}

export type StreamStatus = 'connecting' | 'live' | 'reconnecting' | 'unauthorized';

/**
 * Listens to GET /stream with the key in a header (EventSource cannot send headers): fetch, read the body as
 * server-sent events, and on any drop reconnect with Last-Event-ID, so that nothing is missed.
 */
export function listen(
  key: string,
  onEvent: (event: StreamEvent) => void,
  onStatus: (status: StreamStatus) => void,
): () => void {
  let stopped = false;
  let lastId: string | undefined;
  let controller: AbortController | undefined;
  let retryMs = 1000;

  const run = async () => {
    while (!stopped) {
      controller = new AbortController();
      onStatus(lastId === undefined ? 'connecting' : 'reconnecting');
      try {
        const headers: Record<string, string> = { 'X-Admin-Key': key, Accept: 'text/event-stream' };
        if (lastId !== undefined) headers['Last-Event-ID'] = lastId;
        const response = await fetch('/stream', { headers, signal: controller.signal, cache: 'no-store' });
        if (response.status === 401 || response.status === 403) {
          onStatus('unauthorized');
          return;
        }
        if (!response.ok || !response.body) throw new Error(`stream answered ${response.status}`);
        onStatus('live');
        const parser = createParser({
          onEvent: (message) => {
            if (message.id) lastId = message.id;
            try {
              onEvent({ position: Number(message.id), envelope: JSON.parse(message.data) as Envelope });
            } catch {
              // an event this page does not understand
            }
          },
          onRetry: (ms) => (retryMs = ms),
        });
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(value);
        }
      } catch {
        // dropped: reconnect below
      }
      if (stopped) return;
      onStatus('reconnecting');
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  };
  void run();
  return () => {
    stopped = true;
    controller?.abort();
  };
}
