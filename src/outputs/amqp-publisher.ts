/**
 * Publishes to RabbitMQ (AMQP 0-9-1, amqplib): a durable topic exchange, asserted on every connection, and a
 * confirm channel; a batch is published in order on that one channel (so the broker routes it in order) and
 * succeeds once every message is confirmed. Messages are persistent, with `messageId` the event's log position.
 * A closed channel or connection fails what is unconfirmed; the next batch connects again.
 */
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import type { OutgoingMessage } from './output-message.js';
import { PUBLISH_TIMEOUT_MS, ReconnectingPublisher, within } from './output-publisher.js';

interface Connection {
  model: ChannelModel;
  channel: ConfirmChannel;
  /** Rejects once the channel or the connection closes (never resolves). */
  closed: Promise<never>;
}

export class AmqpPublisher extends ReconnectingPublisher<Connection> {
  constructor(
    private readonly url: string,
    private readonly exchange: string,
    timeoutMs = PUBLISH_TIMEOUT_MS,
  ) {
    super(timeoutMs, 'the broker did not confirm in time');
  }

  protected send({ channel }: Connection, messages: readonly OutgoingMessage[]): Promise<unknown> {
    const confirms = messages.map(
      (message) =>
        new Promise<void>((resolve, reject) => {
          channel.publish(
            this.exchange,
            message.key,
            message.body,
            {
              messageId: message.id,
              persistent: true,
              contentType: 'application/json',
              type: message.event,
              timestamp: Math.floor(message.timestamp / 1000),
              appId: 'device-messaging-gateway',
              headers: { deviceId: message.deviceId, eventId: message.eventId },
            },
            (error: unknown) => (error ? reject(asError(error)) : resolve()),
          );
        }),
    );
    return Promise.all(confirms);
  }

  protected async disconnect(connection: Connection): Promise<void> {
    await connection.model.close().catch(() => undefined);
  }

  protected async connect(): Promise<Connection> {
    const model = await within(
      amqp.connect(this.url, { timeout: this.timeoutMs }),
      this.timeoutMs,
      'the broker did not answer in time',
    );
    let fail: (error: Error) => void = () => undefined;
    const closed = new Promise<never>((_, reject) => (fail = reject));
    closed.catch(() => undefined); // only raced while a batch is in flight
    model.on('error', (error: Error) => fail(error));
    model.on('close', (error?: Error) => fail(error ?? new Error('the connection to the broker closed')));
    try {
      const channel = await model.createConfirmChannel();
      let channelError: Error | undefined;
      channel.on('error', (error: Error) => (channelError = error));
      channel.on('close', () => fail(channelError ?? new Error('the channel to the broker closed')));
      await channel.assertExchange(this.exchange, 'topic', { durable: true });
      return { model, channel, closed };
    } catch (error) {
      await model.close().catch(() => undefined);
      throw error;
    }
  }
}

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));
