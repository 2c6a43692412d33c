/**
 * Wires the broker outputs (src/outputs: RabbitMQ, NATS JetStream) into the gateway: their URLs' sealing, their
 * commands, and the subscribers of the log, run by one process of the machine (docs/architecture.md, "Event
 * outputs": worker 1 under GATEWAY_PROCESSES, the lone process otherwise; the others answer from the read model).
 */
import type { Logger } from 'pino';
import type { EventStore } from '../eventstore/event-store.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ProjectionRunner, ReadModelProgress } from '../projections/projection-runner.js';
import type { Clock } from '../time/clock.js';
import { OutputCommands } from '../outputs/output-commands.js';
import { OutputUrls } from '../outputs/output-url.js';
import { Outputs } from '../outputs/outputs.js';
import type { OutputsReadModel } from '../outputs/outputs-read-model.js';

export interface OutputsWiring {
  store: EventStore;
  outputs: OutputsReadModel;
  /** The read models' progress and position (the outputs' lag, and the changes they wait for). */
  projections: ReadModelProgress & Pick<ProjectionRunner, 'position'>;
  log: Logger;
  clock: Clock;
  metrics: Metrics;
  encryptionKey: Uint8Array | undefined;
  retryMaxDelayMs: number;
  /** This process's number under GATEWAY_PROCESSES (0: the lone process). */
  worker: number;
}

/** The outputs' commands (the routes') and the outputs, started. */
export function startOutputs(wiring: OutputsWiring): { commands: OutputCommands; outputs: Outputs } {
  const { store, projections, clock } = wiring;
  const urls = new OutputUrls(wiring.encryptionKey);
  const commands = new OutputCommands({
    store,
    outputs: wiring.outputs,
    projections,
    head: () => projections.position,
    urls,
    now: () => clock.now(),
  });
  const outputs = new Outputs({
    store,
    outputs: wiring.outputs,
    commands,
    urls,
    projections,
    log: wiring.log,
    clock,
    retryMaxDelayMs: wiring.retryMaxDelayMs,
    // One publisher per machine: every worker publishing would put each event on the broker once per worker.
    publishes: wiring.worker <= 1,
    metrics: wiring.metrics,
  });
  outputs.start();
  return { commands, outputs };
}
