import { createParser } from 'eventsource-parser';
import type { Envelope, StreamEvent } from './types.js';

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
