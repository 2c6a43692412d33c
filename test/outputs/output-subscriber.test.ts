/**
 * An output's subscriber on a real SQLite store, with a publisher that fails as a broker does and a clock
 * the test moves: the position holds while publishing fails, tries are spaced by a doubling pause, the
 * failure is recorded once per streak (credentials masked) and cleared when a batch goes through, and the
 * position is recorded once the subscriber catches up.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventStore } from '../../src/eventstore/event-store.js';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { OutputCommands } from '../../src/outputs/output-commands.js';
import type { OutgoingMessage } from '../../src/outputs/output-message.js';
import type { Publisher } from '../../src/outputs/output-publisher.js';
import { OutputSubscriber } from '../../src/outputs/output-subscriber.js';
import { OutputUrls } from '../../src/outputs/output-url.js';
import type { OutputsReadModel } from '../../src/outputs/outputs-read-model.js';
import { eventually } from '../support/eventually.js';
import { TestClock } from '../support/test-clock.js';
import { tempDir } from '../support/temp-dir.js';
import { openTestStore } from '../support/test-store.js';
import { messageReceived } from '../webhooks/support/events.js';

class FakePublisher implements Publisher {
  readonly batches: OutgoingMessage[][] = [];
  calls = 0;
  failures = 0;

  async publish(messages: readonly OutgoingMessage[]): Promise<void> {
    this.calls += 1;
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('connect ECONNREFUSED amqp://user:s3cret@broker.example:5672');
    }
    this.batches.push([...messages]);
  }

  async close(): Promise<void> {}
}

describe('output subscriber', () => {
  let store: EventStore | undefined;
  let subscriber: OutputSubscriber | undefined;
  afterEach(async () => {
    await subscriber?.stop();
    await store?.close();
  });

  it('holds its position while publishing fails, tries again after doubling pauses, and records what it confirmed', async () => {
    store = await openTestStore(tempDir('dmg-output-subscriber-'));
    const commands = new OutputCommands({
      store,
      outputs: {} as OutputsReadModel,
      projections: { waitFor: async () => undefined, settle: async () => true },
      head: () => 0,
      urls: new OutputUrls(undefined),
    });
    const { output } = await commands.create({
      type: 'amqp',
      url: 'amqp://127.0.0.1:5672',
      exchange: 'x',
      events: ['message.received'],
      devices: ['sub-a'],
    });
    const outputId = output.outputId;
    for (let n = 1; n <= 5; n++) {
      await store.append(inboxStream('sub-a'), [messageReceived('sub-a', n)]);
      await store.append(inboxStream('sub-b'), [messageReceived('sub-b', n)]);
    }
    const clock = new TestClock();
    const publisher = new FakePublisher();
    publisher.failures = 2;
    subscriber = new OutputSubscriber(outputId, output, {
      store,
      commands,
      publisher,
      log: pino({ level: 'silent' }),
      clock,
      retryMaxDelayMs: 10_000,
      pageSize: 3,
    });
    subscriber.start();
    await eventually(() => publisher.calls === 1, 'the first try');
    await eventually(async () => (await commands.state(outputId)).lastError !== null, 'the error recorded');
    const failing = await commands.state(outputId);
    expect(failing.lastError).toBe('connect ECONNREFUSED amqp://***:***@broker.example:5672');
    await clock.advance(249);
    expect(publisher.calls).toBe(1);
    await clock.advance(1);
    await eventually(() => publisher.calls === 2, 'the second try, 250 ms later');
    await clock.advance(499);
    expect(publisher.calls).toBe(2);
    expect(subscriber.position).toBe(failing.position);
    await clock.advance(1);
    // Through: the first page (3 events, 2 of sub-a) and then the rest, all of sub-a's, in order.
    await eventually(() => publisher.batches.flat().length === 5, 'every message of sub-a');
    const published = publisher.batches.flat();
    expect(published.map((m) => m.eventId)).toEqual([1, 2, 3, 4, 5].map((n) => messageReceived('sub-a', n).id));
    expect(published.map((m) => m.key)).toEqual(Array(5).fill('sub-a.message.received'));
    const last = (await store.readAll()).filter((e) => e.type === 'MessageReceived').at(-1)!.position;
    const recorded = await eventually(async () => {
      const state = await commands.state(outputId);
      return state.position >= last && state.lastError === null ? state : undefined;
    }, 'the position recorded and the error cleared');
    expect(recorded.position).toBeGreaterThanOrEqual(last);

    // Woken by what comes next.
    await store.append(inboxStream('sub-a'), [messageReceived('sub-a', 6)]);
    subscriber.wake();
    await eventually(() => publisher.batches.flat().length === 6, 'the next message');
  });
});
