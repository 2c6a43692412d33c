import { createParser } from 'eventsource-parser';
import { eventually } from '../../support/eventually.js';

export interface StreamEvent {
  id: number;
  event: string;
  envelope: { id: string; event: string; deviceId: string; timestamp: string; data: any };
}

/** A server-sent events client over fetch (the key goes in a header, as EventSource cannot do). */
export class SseClient {
  readonly events: StreamEvent[] = [];
  comments = 0;
  status = 0;
  ended = false;
  private readonly abort = new AbortController();
  private reading: Promise<void> | undefined;

  static async open(url: string, headers: Record<string, string>): Promise<SseClient> {
    const client = new SseClient();
    const response = await fetch(url, { headers, signal: client.abort.signal });
    client.status = response.status;
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      client.ended = true;
      return client;
    }
    const parser = createParser({
      onEvent: (message) =>
        client.events.push({
          id: Number(message.id),
          event: message.event ?? 'message',
          envelope: JSON.parse(message.data),
        }),
      onComment: () => (client.comments += 1),
    });
    const decoder = new TextDecoder();
    client.reading = (async () => {
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
          parser.feed(decoder.decode(chunk, { stream: true }));
      } catch {
        // aborted or cut off by the server
      } finally {
        client.ended = true;
      }
    })();
    return client;
  }

  get ids(): number[] {
    return this.events.map((e) => e.id);
  }

  get lastId(): number | undefined {
    return this.events.at(-1)?.id;
  }

  waitFor(check: (events: StreamEvent[]) => boolean, what: string, timeoutMs?: number): Promise<true> {
    return eventually(() => check(this.events), what, timeoutMs);
  }

  waitForCount(count: number, timeoutMs?: number): Promise<true> {
    return this.waitFor(
      (events) => events.length >= count,
      `${count} stream events (have ${this.events.length})`,
      timeoutMs,
    );
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.reading;
  }
}
