/**
 * Readers of what the gateway published to the shared test brokers (RabbitMQ on 5672, NATS JetStream on 4222):
 * a queue bound to an exchange before the events flow, and a JetStream stream read back message by message.
 * Every test names its own exchange, subject and stream, and removes them.
 */
import { randomUUID } from 'node:crypto';
import amqp, { type ChannelModel } from 'amqplib';
import { type NatsConnection, connect } from 'nats';

export const RABBIT_PORT = 5672;
export const NATS_PORT = 4222;
export const RABBIT_URL = `amqp://guest:guest@127.0.0.1:${RABBIT_PORT}`;
export const NATS_URL = `nats://127.0.0.1:${NATS_PORT}`;

/** A name no other test (or helper, or CI run) uses. */
export const uniqueName = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

export interface Received {
  messageId: string;
  key: string;
  body: { id: string; event: string; deviceId: string; data: Record<string, unknown> };
}

/** A queue bound to `exchange` (a topic exchange, made as the gateway makes it) with `#`: every message published to it. */
export class RabbitQueue {
  readonly messages: Received[] = [];

  private constructor(
    private readonly model: ChannelModel,
    private readonly exchange: string,
  ) {}

  static async bind(exchange: string): Promise<RabbitQueue> {
    const model = await amqp.connect(RABBIT_URL);
    const channel = await model.createChannel();
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
    await channel.bindQueue(queue, exchange, '#');
    const reader = new RabbitQueue(model, exchange);
    await channel.consume(
      queue,
      (message) => {
        if (!message) return;
        reader.messages.push({
          messageId: String(message.properties.messageId),
          key: message.fields.routingKey,
          body: JSON.parse(message.content.toString('utf8')) as Received['body'],
        });
      },
      { noAck: true },
    );
    return reader;
  }

  async close(): Promise<void> {
    try {
      const channel = await this.model.createChannel();
      await channel.deleteExchange(this.exchange);
    } finally {
      await this.model.close().catch(() => undefined);
    }
  }
}

/** Reads a JetStream stream back, and deletes it. */
export class NatsStreamReader {
  private constructor(
    private readonly nc: NatsConnection,
    readonly stream: string,
  ) {}

  static async open(stream: string): Promise<NatsStreamReader> {
    return new NatsStreamReader(await connect({ servers: `127.0.0.1:${NATS_PORT}` }), stream);
  }

  /** How many messages the stream holds (0 when it does not exist yet). */
  async count(): Promise<number> {
    const jsm = await this.nc.jetstreamManager();
    try {
      return (await jsm.streams.info(this.stream)).state.messages;
    } catch {
      return 0;
    }
  }

  /** Every message the stream holds, in its order. */
  async messages(): Promise<Received[]> {
    const jsm = await this.nc.jetstreamManager();
    const { state } = await jsm.streams.info(this.stream);
    const messages: Received[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
      const stored = await jsm.streams.getMessage(this.stream, { seq });
      messages.push({
        messageId: stored.header.get('Nats-Msg-Id'),
        key: stored.subject,
        body: stored.json<Received['body']>(),
      });
    }
    return messages;
  }

  async close(): Promise<void> {
    const jsm = await this.nc.jetstreamManager();
    await jsm.streams.delete(this.stream).catch(() => undefined);
    await this.nc.close();
  }
}
