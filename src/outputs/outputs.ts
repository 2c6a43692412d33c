/**
 * The broker outputs of this gateway (docs/architecture.md, "Event outputs"): one subscriber per output
 * (output-subscriber.ts), started for every output the read model holds and started again with its new
 * configuration when it changes, stopped when it is deleted; all woken whenever the log grows. It follows the
 * log itself (src/eventstore/follow-all.ts), so outputs made, changed or deleted by another process are seen
 * too, and keeps the newest events it sees in a tail shared by the caught-up subscribers (src/eventstore/log-tail.ts),
 * so each new page of the log is read once however many outputs there are. With several processes on one machine only the first runs the subscribers (the others answer the
 * routes from the read model). The answers' `position` is the subscriber's (ahead of the recorded one by at
 * most a second of publishing), `lag` how far the log's head (as the read models know it) is past it.
 */
import { Counter } from 'prom-client';
import type { Logger } from 'pino';
import type { EventStore } from '../eventstore/event-store.js';
import { followAll } from '../eventstore/follow-all.js';
import { LogTail } from '../eventstore/log-tail.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ProjectionRunner } from '../projections/projection-runner.js';
import type { Clock } from '../time/clock.js';
import { AmqpPublisher } from './amqp-publisher.js';
import type { OutputCommands } from './output-commands.js';
import type { OutputConfig } from './output-events.js';
import type { Publisher } from './output-publisher.js';
import { OutputSubscriber } from './output-subscriber.js';
import type { OutputUrls } from './output-url.js';
import type { OutputsReadModel, RecordedOutput } from './outputs-read-model.js';
import { NatsPublisher } from './nats-publisher.js';

/** Events an output reads from the log at a time (and publishes in one batch at most). */
export const OUTPUT_PAGE_SIZE = 1_000;
/** Pages of the newest events kept for the subscribers at the head; one further behind reads the log itself. */
const TAIL_PAGES = 4;

const CONFIG_EVENTS: ReadonlySet<string> = new Set(['OutputCreated', 'OutputChanged', 'OutputDeleted']);

export interface OutputsDeps {
  store: EventStore;
  outputs: OutputsReadModel;
  commands: OutputCommands;
  urls: OutputUrls;
  projections: Pick<ProjectionRunner, 'position' | 'waitFor'>;
  log: Logger;
  clock: Clock;
  retryMaxDelayMs: number;
  /** Whether this process publishes (false: another process of the machine does). */
  publishes: boolean;
  metrics?: Metrics;
  /** Events read and published at a time (tests make it small); default OUTPUT_PAGE_SIZE. */
  pageSize?: number;
  /** Makes an output's publisher (tests); default: amqp-publisher.ts or nats-publisher.ts. */
  publisherOf?: (outputId: string, config: OutputConfig, url: string) => Publisher;
}

/** An output as the routes answer it (before its URL is shown). */
export interface OutputStatus {
  output: RecordedOutput['output'];
  position: number;
  lag: number;
  lastError: string | null;
}

interface Running {
  subscriber: OutputSubscriber;
  /** The configuration it runs with, as recorded. */
  key: string;
}

export class Outputs {
  private readonly running = new Map<string, Running>();
  /** Why an output runs no subscriber (its URL cannot be opened with this ENCRYPTION_KEY). */
  private readonly unusable = new Map<string, string>();
  private follower: { stop(): Promise<void> } | undefined;
  private tail: LogTail | undefined;
  private syncing: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly published: Counter<'output'> | undefined;
  private readonly pageSize: number;

  constructor(private readonly deps: OutputsDeps) {
    this.pageSize = deps.pageSize ?? OUTPUT_PAGE_SIZE;
    const { metrics } = deps;
    if (metrics) {
      this.published = new Counter({
        name: 'dmg_output_messages_published_total',
        help: 'Messages the broker outputs published and had confirmed, by output id (repeats after a failure included).',
        labelNames: ['output'] as const,
        registers: [metrics.registry],
      });
      metrics.gauge(
        'dmg_output_lag',
        'How far each broker output is behind the log (log positions; events on SQLite).',
        ['output'],
        () =>
          this.deps.outputs.list().map((recorded) => ({
            labels: { output: recorded.output.outputId },
            value: this.status(recorded).lag,
          })),
      );
    }
  }

  /** Starts a subscriber for every output (when this process publishes) and follows the log for changes. */
  start(): void {
    if (!this.deps.publishes) return;
    const after = this.deps.projections.position;
    const tail = (this.tail = new LogTail(after, TAIL_PAGES * this.pageSize));
    for (const recorded of this.deps.outputs.list()) this.sync(recorded.output.outputId);
    this.follower = followAll(this.deps.store, {
      after,
      name: 'outputs',
      log: this.deps.log,
      onBatch: (events) => {
        // Kept only while an output runs: with none, 4,000 events held for nobody would outlive the young
        // generation (garbage for a major GC); a subscriber started later reads the log until the tail refills.
        if (this.running.size > 0) tail.add(events);
        else if (events.length > 0) tail.restartAfter(events[events.length - 1].position);
        const changed = new Set<string>();
        for (const event of events)
          if (CONFIG_EVENTS.has(event.type)) changed.add((event.data as { outputId: string }).outputId);
        for (const { subscriber } of this.running.values()) subscriber.wake();
        if (changed.size === 0) return;
        const position = events[events.length - 1].position;
        // The read model holds the change once it reaches the batch; the subscribers are changed in the background.
        void this.deps.projections.waitFor(position).then(
          () => {
            for (const outputId of changed) this.sync(outputId);
          },
          (error: unknown) => {
            this.deps.log.warn({ err: error }, 'read models lag; outputs changed meanwhile start once they catch up');
            for (const outputId of changed) this.sync(outputId);
          },
        );
      },
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.follower?.stop();
    await this.syncing;
    await Promise.all([...this.running.values()].map(({ subscriber }) => subscriber.stop()));
    this.running.clear();
  }

  /** Every output, oldest first, with its position, lag and last error. */
  list(): OutputStatus[] {
    return this.deps.outputs.list().map((recorded) => this.status(recorded));
  }

  get(outputId: string): OutputStatus | undefined {
    const recorded = this.deps.outputs.get(outputId);
    return recorded ? this.status(recorded) : undefined;
  }

  /** The status of an output as just recorded (a route's own write), subscriber state included. */
  status(recorded: RecordedOutput): OutputStatus {
    const outputId = recorded.output.outputId;
    const subscriber = this.running.get(outputId)?.subscriber;
    const position = Math.max(recorded.position, subscriber?.position ?? 0);
    return {
      output: recorded.output,
      position,
      lag: Math.max(0, this.deps.projections.position - position),
      lastError: this.unusable.get(outputId) ?? (subscriber ? subscriber.lastError : recorded.lastError),
    };
  }

  /** Runs the output as the read model now holds it: started, started again with its new configuration, or stopped. */
  private sync(outputId: string): void {
    this.syncing = this.syncing
      .then(async () => {
        if (this.stopped) return;
        const recorded = this.deps.outputs.get(outputId);
        const running = this.running.get(outputId);
        const key = recorded ? JSON.stringify(recorded.output) : undefined;
        if (running && running.key === key) return;
        if (running) {
          this.running.delete(outputId);
          await running.subscriber.stop();
        }
        this.unusable.delete(outputId);
        if (!recorded || key === undefined) return;
        let url: string;
        try {
          url = this.deps.urls.open(outputId, recorded.output);
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          this.unusable.set(outputId, reason);
          this.deps.log.error({ outputId, err: error }, 'output URL unreadable; the output waits');
          return;
        }
        const publisher = (this.deps.publisherOf ?? publisherOf)(outputId, recorded.output, url);
        const subscriber = new OutputSubscriber(outputId, recorded.output, {
          store: this.deps.store,
          tail: this.tail,
          commands: this.deps.commands,
          publisher,
          log: this.deps.log,
          clock: this.deps.clock,
          retryMaxDelayMs: this.deps.retryMaxDelayMs,
          pageSize: this.pageSize,
          onPublished: (count) => this.published?.inc({ output: outputId }, count),
        });
        this.running.set(outputId, { subscriber, key });
        subscriber.start();
      })
      .catch((error: unknown) => this.deps.log.error({ err: error, outputId }, 'could not start or stop an output'));
  }
}

function publisherOf(outputId: string, config: OutputConfig, url: string): Publisher {
  if (config.type === 'amqp') return new AmqpPublisher(url, config.exchange ?? '');
  return new NatsPublisher(url, config.subject ?? '', config.stream, `dmg-output-${outputId}`);
}
