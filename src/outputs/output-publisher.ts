/**
 * What an output's subscriber publishes through (output-subscriber.ts): a batch of messages, in order, resolved
 * once the broker has confirmed all of them (AMQP publisher confirms, JetStream acks), rejected otherwise. A
 * publisher connects when it is first used and after a failure: the subscriber then publishes the whole batch
 * again on a fresh connection (duplicates carry the same message id). ReconnectingPublisher holds what both
 * brokers share (the connection, its generation, the race of the confirms against its close and the timeout);
 * amqp-publisher.ts and nats-publisher.ts say how to connect, send and disconnect.
 */
import { TIMED_OUT, raceTimeout } from '../time/race-timeout.js';
import type { OutgoingMessage } from './output-message.js';

export interface Publisher {
  publish(messages: readonly OutgoingMessage[]): Promise<void>;
  /** Ends the connection; the next publish connects again. Never throws. */
  close(): Promise<void>;
}

/** How long a connection attempt, or the confirms of one batch, may take before the try counts as failed. */
export const PUBLISH_TIMEOUT_MS = 10_000;

/** Rejects with `message` after `ms` unless `promise` settles first. */
export async function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  const outcome = await raceTimeout(promise, ms);
  if (outcome === TIMED_OUT) throw new Error(message);
  return outcome;
}

/** A connection to a broker: `closed` rejects once it closes (never resolves). */
export interface BrokerConnection {
  closed: Promise<never>;
}

export abstract class ReconnectingPublisher<C extends BrokerConnection> implements Publisher {
  private connection: C | undefined;
  /** Moves on at every close: a connection that opens after a close is closed at once, not kept. */
  private generation = 0;

  constructor(
    protected readonly timeoutMs: number,
    /** The error of a batch not confirmed in time. */
    private readonly unconfirmed: string,
  ) {}

  /** Opens a connection (within the timeout), ready to send. */
  protected abstract connect(): Promise<C>;
  /** Sends the batch in order; resolves once the broker confirmed every message. */
  protected abstract send(connection: C, messages: readonly OutgoingMessage[]): Promise<unknown>;
  /** Ends a connection; never throws. */
  protected abstract disconnect(connection: C): Promise<void>;

  async publish(messages: readonly OutgoingMessage[]): Promise<void> {
    const connection = (this.connection ??= await this.open());
    try {
      // A connection that closes fails what is unconfirmed at once, rather than at the timeout.
      const outcome = await raceTimeout(
        Promise.race([this.send(connection, messages), connection.closed]),
        this.timeoutMs,
      );
      if (outcome === TIMED_OUT) throw new Error(this.unconfirmed);
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  async close(): Promise<void> {
    this.generation += 1;
    const connection = this.connection;
    this.connection = undefined;
    if (connection) await this.disconnect(connection);
  }

  private async open(): Promise<C> {
    const generation = this.generation;
    const connection = await this.connect();
    if (generation === this.generation) return connection;
    await this.disconnect(connection);
    throw new Error('the publisher was closed while it connected');
  }
}
