/**
 * Publishes to NATS JetStream (`nats` v2): each message with `Nats-Msg-Id` set to the event's log position, so
 * that the server drops a repeat within the stream's duplicate window; a batch is published in order on one
 * connection and succeeds once JetStream has acknowledged every message. The client's own reconnection is off:
 * it would send what it buffered on a new connection after what a lost one never delivered, out of order; a
 * lost connection fails the batch instead, and the next batch connects again (what the server already stored
 * is dropped as a duplicate). With `stream`, the stream is made on connecting when it does not exist, holding
 * the subjects the template makes.
 */
import { type ConnectionOptions, type JetStreamClient, type NatsConnection, connect, headers } from 'nats';
import { subjectFilterOf } from './output-message.js';
import type { OutgoingMessage } from './output-message.js';
import { PUBLISH_TIMEOUT_MS, type Publisher, within } from './output-publisher.js';

interface Connection {
  nc: NatsConnection;
  js: JetStreamClient;
  closed: Promise<never>;
}

export class NatsPublisher implements Publisher {
  private connection: Connection | undefined;
  /** Moves on at every close: a connection that opens after a close is closed at once, not kept. */
  private generation = 0;

  constructor(
    private readonly url: string,
    private readonly subject: string,
    private readonly stream: string | undefined,
    private readonly name: string,
    private readonly timeoutMs = PUBLISH_TIMEOUT_MS,
  ) {}

  async publish(messages: readonly OutgoingMessage[]): Promise<void> {
    const connection = (this.connection ??= await this.open());
    const { js, closed } = connection;
    try {
      const acks = messages.map((message) => {
        const h = headers();
        h.set('Dmg-Event', message.event);
        h.set('Dmg-Device-Id', message.deviceId);
        h.set('Dmg-Event-Id', message.eventId);
        return js.publish(message.key, message.body, { msgID: message.id, headers: h, timeout: this.timeoutMs });
      });
      await within(Promise.race([Promise.all(acks), closed]), this.timeoutMs, 'JetStream did not acknowledge in time');
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  async close(): Promise<void> {
    this.generation += 1;
    const connection = this.connection;
    this.connection = undefined;
    if (!connection) return;
    await connection.nc.close().catch(() => undefined);
  }

  private async open(): Promise<Connection> {
    const generation = this.generation;
    const connection = await this.connect();
    if (generation === this.generation) return connection;
    await connection.nc.close().catch(() => undefined);
    throw new Error('the publisher was closed while it connected');
  }

  private async connect(): Promise<Connection> {
    const nc = await within(
      connect(connectionOptions(this.url, this.name, this.timeoutMs)),
      this.timeoutMs,
      'the server did not answer in time',
    );
    const closed = nc.closed().then((error) => {
      throw error ?? new Error('the connection to the server closed');
    });
    closed.catch(() => undefined); // only raced while a batch is in flight
    try {
      if (this.stream !== undefined) await this.ensureStream(nc, this.stream);
      return { nc, js: nc.jetstream({ timeout: this.timeoutMs }), closed };
    } catch (error) {
      await nc.close().catch(() => undefined);
      throw error;
    }
  }

  private async ensureStream(nc: NatsConnection, stream: string): Promise<void> {
    const jsm = await nc.jetstreamManager({ timeout: this.timeoutMs });
    try {
      await jsm.streams.info(stream);
    } catch (error) {
      if (!/stream not found/i.test(error instanceof Error ? error.message : '')) throw error;
      await jsm.streams.add({ name: stream, subjects: [subjectFilterOf(this.subject)] });
    }
  }
}

/** The client's options from the output's URL: its server, and its credentials as user/password (or a token). */
function connectionOptions(url: string, name: string, timeoutMs: number): ConnectionOptions {
  const parsed = new URL(url);
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  const port = parsed.port === '' ? '4222' : parsed.port;
  return {
    servers: `${parsed.hostname}:${port}`,
    name,
    reconnect: false,
    timeout: timeoutMs,
    ...(parsed.protocol === 'tls:' ? { tls: {} } : {}),
    ...(user !== '' && pass !== '' ? { user, pass } : user !== '' ? { token: user } : {}),
  };
}
