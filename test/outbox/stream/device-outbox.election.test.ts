/**
 * Two processes' writers of one device's outbox on the three-node EventStoreDB test cluster, through an election
 * (issue 31): one keeps getting in first while reads and writes are slow, so the other's appends keep being
 * refused. It decides again until its deadline (src/outbox/stream/device-outbox.ts, CONFLICT_DEADLINE_MS), and
 * answers `busy` (503) past it, never the conflict (409 concurrent_change).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DelegatingEventStore } from '../../../src/eventstore/delegating-store.js';
import {
  type AppendOptions,
  type EventStore,
  type NewEvent,
  WrongExpectedRevisionError,
} from '../../../src/eventstore/event-store.js';
import { openEventStoreDbStore } from '../../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import { DomainError } from '../../../src/errors/domain-error.js';
import { outboxStream } from '../../../src/messages/message-events.js';
import { DeviceOutbox } from '../../../src/outbox/stream/device-outbox.js';
import type { NewMessage } from '../../../src/outbox/stream/outbox-decider.js';
import { type EsdbTestServer, startEsdbTestCluster } from '../../support/esdb-test-server.js';
import { TestClock } from '../../support/test-clock.js';

const message = (device: string, n: number): NewMessage => ({
  outboxId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  waMessageId: `3EB0${String(n).padStart(18, '0')}`,
  to: '4915112345678',
  content: { kind: 'text' as const, text: `${device} m${n}` },
  createdAt: new Date().toISOString(),
});
const queue = (device: string, n: number) =>
  ({ type: 'QueueMessage', deviceId: device, message: message(device, n) }) as const;

/**
 * Process A's store: before each of its first `times` appends to the outbox, process B's writer gets a send in
 * (so A's append is refused), and `stepMs` pass (the election's slow reads and writes); at the third, the leader
 * dies and another is elected while B's send is under way.
 */
class BeatenEveryTime extends DelegatingEventStore {
  beaten = 0;
  election: Promise<unknown> | undefined;

  constructor(
    inner: EventStore,
    private readonly other: () => DeviceOutbox,
    private readonly cluster: EsdbTestServer,
    private readonly clock: TestClock,
    private readonly times: number,
    private readonly stepMs: number,
  ) {
    super(inner);
  }

  override async append(streamId: string, events: readonly NewEvent[], options?: AppendOptions) {
    if (streamId.startsWith('outbox-') && this.beaten < this.times) {
      this.beaten += 1;
      if (this.beaten === 3) this.election = this.cluster.failover(100);
      await this.other().execute(queue(this.other().deviceId, 1_000 + this.beaten));
      await this.clock.advance(this.stepMs);
    }
    return super.append(streamId, events, options);
  }
}

describe('two processes append to one outbox through an election (issue 31)', () => {
  const opened: EventStore[] = [];
  let cluster: EsdbTestServer | undefined;
  afterEach(async () => {
    await Promise.allSettled(opened.splice(0).map((store) => store.close()));
    await cluster?.stop();
    cluster = undefined;
  });

  const setUp = async (device: string, times: number, stepMs: number) => {
    cluster = await startEsdbTestCluster();
    const clock = new TestClock();
    const [storeA, storeB] = [await openEventStoreDbStore(cluster.url), await openEventStoreDbStore(cluster.url)];
    opened.push(storeA, storeB);
    const b = await DeviceOutbox.load(storeB, device, { pipeline: false });
    const beaten = new BeatenEveryTime(storeA, () => b, cluster, clock, times, stepMs);
    const a = await DeviceOutbox.load(beaten, device, {
      pipeline: false,
      now: () => clock.now(),
      // No back-off pauses: the clock, not the timers, says how long it took.
      random: () => 0,
    });
    return { a, beaten, storeA };
  };

  it('decides a send again after 11 refusals over 13 s and an election, and queues it (was 409 concurrent_change after 10 and 10 s)', async () => {
    const { a, beaten, storeA } = await setUp('election-1', 11, 1_200);
    const executed = await a.execute(queue('election-1', 1));
    expect(beaten.beaten).toBe(11);
    await beaten.election;
    // Queued after the other process's eleven.
    expect(executed.result).toMatchObject({ kind: 'queued', message: { seq: 12 } });
    const stored = await storeA.readStream(outboxStream('election-1'));
    expect(stored.filter((e) => e.type === 'OutboxMessageQueued')).toHaveLength(12);
  }, 60_000);

  it('answers busy (503, nothing recorded) once the deadline passed, never the conflict', async () => {
    const { a, beaten, storeA } = await setUp('election-2', 12, 2_500);
    const outcome = await a.execute(queue('election-2', 1)).catch((error: unknown) => error);
    await beaten.election;
    expect(outcome).not.toBeInstanceOf(WrongExpectedRevisionError);
    expect(outcome).toBeInstanceOf(DomainError);
    expect(outcome).toMatchObject({ code: 'busy', reason: 'outbox_contended', retryAfterSeconds: 1 });
    const stored = await storeA.readStream(outboxStream('election-2'));
    expect(stored.map((e) => (e.data as { outboxId: string }).outboxId)).not.toContain(
      message('election-2', 1).outboxId,
    );
  }, 60_000);
});
