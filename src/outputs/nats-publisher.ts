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
import { PUBLISH_TIMEOUT_MS, ReconnectingPublisher, within } from './output-publisher.js';

interface Connection {
  nc: NatsConnection;
  js: JetStreamClient;
  closed: Promise<never>;
}

export class NatsPublisher extends ReconnectingPublisher<Connection> {
  constructor(
    private readonly url: string,
    private readonly subject: string,
    private readonly stream: string | undefined,
    private readonly name: string,
    timeoutMs = PUBLISH_TIMEOUT_MS,
  ) {
    super(timeoutMs, 'JetStream did not acknowledge in time');
  }

  protected send({ js }: Connection, messages: readonly OutgoingMessage[]): Promise<unknown> {
    const acks = messages.map((message) => {
      const h = headers();
      h.set('Dmg-Event', message.event);
      h.set('Dmg-Device-Id', message.deviceId);
      h.set('Dmg-Event-Id', message.eventId);
      return js.publish(message.key, message.body, { msgID: message.id, headers: h, timeout: this.timeoutMs });
    });
    return Promise.all(acks);
  }

  protected async disconnect(connection: Connection): Promise<void> {
    await connection.nc.close().catch(() => undefined);
  }

  protected async connect(): Promise<Connection> {
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
