/**
 * The outputs together (src/outputs/outputs.ts) on a real SQLite store and read model, with publishers that
 * stand for brokers and a clock the test moves: outputs at the head share one read of what is new (the store,
 * wrapped, counts its reads: none by them, and the log's subscription hands each new event once), an output
 * whose broker is down holds its position while the others go on, and once the broker is back it reads the
 * pages the others' shared tail let go from the log itself, catches up in order, and shares the tail again.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { DelegatingEventStore } from '../../src/eventstore/delegating-store.js';
import type { ReadAllOptions, StoredEvent, SubscribeOptions, Subscription } from '../../src/eventstore/event-store.js';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { OutputCommands } from '../../src/outputs/output-commands.js';
import type { OutgoingMessage } from '../../src/outputs/output-message.js';
import type { Publisher } from '../../src/outputs/output-publisher.js';
import { OutputUrls } from '../../src/outputs/output-url.js';
import type { LogTail } from '../../src/eventstore/log-tail.js';
import { Outputs } from '../../src/outputs/outputs.js';
import { OutputsReadModel } from '../../src/outputs/outputs-read-model.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { ProjectionRunner } from '../../src/projections/projection-runner.js';
import { eventually } from '../support/eventually.js';
import { TestClock } from '../support/test-clock.js';
import { tempDir } from '../support/temp-dir.js';
import { openTestStore } from '../support/test-store.js';
import { messageReceived } from '../webhooks/support/events.js';

/** The store as the outputs see it: its reads of the log counted, and every event its subscriptions hand out. */
class CountingStore extends DelegatingEventStore {
  reads = 0;
  readonly handedOut: number[] = [];

  override readAll(options?: ReadAllOptions): Promise<StoredEvent[]> {
    this.reads += 1;
    return super.readAll(options);
  }

  override subscribe(options?: SubscribeOptions): Subscription {
    const inner = super.subscribe(options);
    const handedOut = this.handedOut;
    return {
      close: () => inner.close(),
      async *[Symbol.asyncIterator]() {
        for await (const batch of inner) {
          handedOut.push(...batch.map((event) => event.position));
          yield batch;
        }
      },
    };
  }
}

/** A broker: takes batches, or refuses them while down. */
class FakeBroker implements Publisher {
  readonly messages: OutgoingMessage[] = [];
  down = false;
  tries = 0;

  async publish(messages: readonly OutgoingMessage[]): Promise<void> {
    this.tries += 1;
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5672');
    this.messages.push(...messages);
  }

  async close(): Promise<void> {}
}

const PAGE = 10;
const silent = pino({ level: 'silent' });
const bodies = (broker: FakeBroker) =>
  broker.messages.map((m) => (JSON.parse(m.body.toString()) as { data: { body: string } }).data.body);

describe('outputs', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setup(count: number) {
    const dir = tempDir('dmg-outputs-');
    const store = await openTestStore(dir);
    cleanups.push(() => store.close());
    const db = openReadModelDb(dir);
    cleanups.push(() => void db.close());
    const model = new OutputsReadModel(db);
    const runner = new ProjectionRunner(store, db, [model], silent);
    await runner.start();
    cleanups.push(() => runner.stop());
    const urls = new OutputUrls(undefined);
    const commands = new OutputCommands({
      store,
      outputs: model,
      projections: runner,
      head: () => runner.position,
      urls,
    });
    const ids: string[] = [];
    for (let n = 0; n < count; n++) {
      const { output } = await commands.create({
        type: 'amqp',
        url: 'amqp://127.0.0.1:5672',
        exchange: `x${n}`,
        events: ['message.received'],
      });
      ids.push(output.outputId);
    }
    const brokers = new Map<string, FakeBroker>(ids.map((id) => [id, new FakeBroker()]));
    const counting = new CountingStore(store);
    const clock = new TestClock();
    let next: FakeBroker | undefined;
    const outputs = new Outputs({
      store: counting,
      outputs: model,
      commands,
      urls,
      projections: runner,
      log: silent,
      clock,
      retryMaxDelayMs: 1_000,
      publishes: true,
      pageSize: PAGE,
      publisherOf: (outputId) => {
        // An output made by add(): its broker is the one add() was given.
        if (!brokers.has(outputId) && next) brokers.set(outputId, next);
        return brokers.get(outputId)!;
      },
    });
    outputs.start();
    cleanups.push(() => outputs.stop());
    const brokerList = ids.map((id) => brokers.get(id)!);
    let sent = 0;
    /** Appends `n` received messages, a few per append, alternating two devices. */
    const receive = async (n: number) => {
      for (let done = 0; done < n; done += 5) {
        const device = sent % 2 === 0 ? 'out-a' : 'out-b';
        const batch = Array.from({ length: Math.min(5, n - done) }, () => messageReceived(device, ++sent));
        await store.append(inboxStream(device), batch);
      }
    };
    const allHave = (which: FakeBroker[]) => which.every((broker) => broker.messages.length === sent);
    // Every output running and at the head: the first message reached them all.
    await receive(1);
    await eventually(() => allHave(brokerList), 'every output at the head');
    /** Makes one more output, its broker given. */
    const add = async (broker: FakeBroker) => {
      next = broker;
      const { output } = await commands.create({
        type: 'amqp',
        url: 'amqp://127.0.0.1:5672',
        exchange: `x${ids.length}`,
        events: ['message.received'],
      });
      brokers.set(output.outputId, broker);
      ids.push(output.outputId);
    };
    return { store, counting, outputs, ids, brokers: brokerList, clock, receive, allHave, sent: () => sent, add };
  }

  it('outputs at the head share one read of each new page: the log is not read again per output', async () => {
    const { counting, brokers, receive, allHave, sent } = await setup(3);
    counting.reads = 0;
    counting.handedOut.length = 0;
    // Five pages, in many appends: each one wakes every output.
    await receive(5 * PAGE);
    await eventually(() => allHave(brokers), 'every message at every output');
    expect(counting.reads).toBe(0);
    expect(new Set(counting.handedOut).size).toBe(counting.handedOut.length);
    for (const broker of brokers)
      expect(bodies(broker)).toEqual(Array.from({ length: sent() }, (_, n) => `message ${n + 1}`));
  });

  it('keeps no events while no output runs; one made later publishes what follows, then shares the tail', async () => {
    const { counting, outputs, receive, sent, add } = await setup(0);
    await receive(3 * PAGE);
    // Nobody to share them with: the tail holds none (held, they would outlive the young generation for nothing).
    const tail = (outputs as unknown as { tail: LogTail }).tail;
    await eventually(() => tail.head > 0 && tail.size === 0, 'the tail empty');
    const late = new FakeBroker();
    await add(late);
    const before = sent();
    await receive(2 * PAGE);
    await eventually(() => late.messages.length === sent() - before, 'the late output publishes what followed it');
    counting.reads = 0;
    await receive(2 * PAGE);
    await eventually(() => late.messages.length === sent() - before, 'and what comes next, from the tail');
    expect(counting.reads).toBe(0);
    expect(bodies(late)).toEqual(Array.from({ length: sent() - before }, (_, n) => `message ${before + n + 1}`));
  });

  it('an output whose broker is down holds its position while the others go on, then reads what the tail let go and catches up', async () => {
    const { store, counting, outputs, ids, brokers, clock, receive, allHave, sent } = await setup(3);
    const [up1, up2, down] = brokers;
    const downId = ids[2];
    down.down = true;
    // Ten pages while it is down: far more than the tail keeps for the outputs at the head.
    await receive(10 * PAGE);
    await eventually(() => allHave([up1, up2]), 'the others publish everything');
    await eventually(() => outputs.get(downId)!.lastError !== null, 'the outage seen');
    expect(outputs.get(downId)!.lastError).toBe('connect ECONNREFUSED 127.0.0.1:5672');
    const held = outputs.get(downId)!.position;
    await eventually(async () => {
      await clock.advance(250);
      return down.tries > 3;
    }, 'tries again while the broker is down');
    const firstRefused = (await store.readAll()).find(
      (event) => (event.data as { body?: string }).body === 'message 2',
    )!.position;
    expect(outputs.get(downId)!.position).toBe(held);
    expect(held).toBeLessThan(firstRefused);
    expect(down.messages.length).toBe(1);

    counting.reads = 0;
    down.down = false;
    await eventually(async () => {
      await clock.advance(1_000);
      return allHave([down]);
    }, 'the output back catches up');
    expect(counting.reads).toBeGreaterThan(0); // its own pages: the tail had let them go
    expect(bodies(down)).toEqual(Array.from({ length: sent() }, (_, n) => `message ${n + 1}`));
    await eventually(() => outputs.get(downId)!.lastError === null, 'the error cleared');

    // Back at the head, it shares the tail again.
    counting.reads = 0;
    await receive(2 * PAGE);
    await eventually(() => allHave(brokers), 'every output has the next messages');
    expect(counting.reads).toBe(0);
  });
});
