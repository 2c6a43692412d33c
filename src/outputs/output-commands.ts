/**
 * The one writer of the outputs' streams (`output-<outputId>`, output-decider.ts): the /outputs routes make,
 * change and delete outputs; each output's subscriber records its position and its errors. A URL is checked
 * before anything is recorded and recorded with its credentials sealed (output-url.ts); templates and names
 * are checked here, so that what is recorded can be published.
 */
import { randomUUID } from 'node:crypto';
import { CommandHandler, type Handled } from '../commands/command-handler.js';
import { invalidField } from '../errors/domain-error.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import { type OutputCommand, type OutputState, outputDecider, outputNotFound } from './output-decider.js';
import {
  type OutputChange,
  type OutputConfig,
  type OutputCreatedData,
  type OutputEvent,
  type OutputType,
  outputStream,
} from './output-events.js';
import { templateRefusal } from './output-message.js';
import { type OutputUrls, outputUrlRefusal } from './output-url.js';
import type { OutputsReadModel, RecordedOutput } from './outputs-read-model.js';

export const DEFAULT_ROUTING_KEY = '{deviceId}.{event}';
export const DEFAULT_SUBJECT = 'dmg.{deviceId}.{event}';

export interface CreateOutputInput {
  type: OutputType;
  url: string;
  exchange?: string;
  routingKey?: string;
  subject?: string;
  stream?: string;
  events: string[];
  devices?: string[];
}

export interface ChangeOutputInput {
  url?: string;
  exchange?: string;
  routingKey?: string;
  subject?: string;
  stream?: string;
  events?: string[];
  devices?: string[] | null;
}

/** Fields that belong to the other type of output. */
const FIELDS_OF: Record<OutputType, { own: string[]; other: string[] }> = {
  amqp: { own: ['exchange', 'routingKey'], other: ['subject', 'stream'] },
  nats: { own: ['subject', 'stream'], other: ['exchange', 'routingKey'] },
};

export class OutputCommands {
  private readonly handler: CommandHandler<OutputState, OutputCommand, OutputEvent>;

  constructor(
    private readonly deps: {
      store: EventStore;
      outputs: OutputsReadModel;
      projections: ReadModelProgress;
      /** The log's head as this process knows it: a new output publishes what follows. */
      head: () => number;
      urls: OutputUrls;
      now?: () => number;
    },
  ) {
    this.handler = new CommandHandler({
      store: deps.store,
      decider: outputDecider,
      snapshots: { every: 100 },
      cacheSize: 1_000,
    });
  }

  async create(input: CreateOutputInput): Promise<RecordedOutput> {
    refuseOtherFields(input.type, input as unknown as Record<string, unknown>);
    checkUrl(input.type, input.url);
    const outputId = randomUUID();
    const config: OutputConfig = {
      type: input.type,
      ...this.deps.urls.seal(outputId, input.url),
      events: input.events,
      ...(input.devices === undefined ? {} : { devices: input.devices }),
    };
    if (input.type === 'amqp') {
      if (input.exchange === undefined) throw invalidField('/exchange', 'is required for an amqp output');
      config.exchange = input.exchange;
      config.routingKey = checkedTemplate('/routingKey', input.routingKey ?? DEFAULT_ROUTING_KEY, 'amqp');
    } else {
      config.subject = checkedTemplate('/subject', input.subject ?? DEFAULT_SUBJECT, 'nats');
      if (input.stream !== undefined) config.stream = input.stream;
    }
    const output: OutputCreatedData = { outputId, ...config, createdAt: this.at(), startAfter: this.deps.head() };
    return this.settled(outputId, await this.handle(outputId, { type: 'CreateOutput', output }));
  }

  async change(outputId: string, patch: ChangeOutputInput): Promise<RecordedOutput> {
    const current = this.deps.outputs.get(outputId) ?? (await this.current(outputId));
    const { type } = current.output;
    refuseOtherFields(type, patch as Record<string, unknown>);
    const change: OutputChange = {};
    if (patch.url !== undefined && patch.url !== current.output.url) {
      // The URL sent back as answers show it keeps the stored one; another is checked and sealed.
      checkUrl(type, patch.url);
      let opened: string | undefined;
      try {
        opened = this.deps.urls.open(outputId, current.output);
      } catch {
        opened = undefined; // sealed with another key: the new URL replaces it
      }
      if (opened !== patch.url) Object.assign(change, this.deps.urls.seal(outputId, patch.url));
    }
    if (patch.exchange !== undefined) change.exchange = patch.exchange;
    if (patch.routingKey !== undefined) change.routingKey = checkedTemplate('/routingKey', patch.routingKey, 'amqp');
    if (patch.subject !== undefined) change.subject = checkedTemplate('/subject', patch.subject, 'nats');
    if (patch.stream !== undefined) change.stream = patch.stream;
    if (patch.events !== undefined) change.events = patch.events;
    if (patch.devices !== undefined) change.devices = patch.devices;
    const handled = await this.handle(outputId, { type: 'ChangeOutput', outputId, change, at: this.at() });
    return this.settled(outputId, handled);
  }

  async delete(outputId: string): Promise<void> {
    const handled = await this.handle(outputId, { type: 'DeleteOutput', outputId, at: this.at() });
    if (handled.position > 0) await this.deps.projections.settle(handled.position);
  }

  /** Every selected event up to `position` is confirmed by the broker. */
  async recordPosition(outputId: string, position: number): Promise<void> {
    await this.handle(outputId, { type: 'RecordPosition', outputId, position, at: this.at() });
  }

  /** Publishing fails with `error` (URL credentials masked), or works again (null). */
  async recordError(outputId: string, error: string | null): Promise<void> {
    await this.handle(outputId, { type: 'RecordError', outputId, error, at: this.at() });
  }

  /** The output as its stream holds it (its subscriber starts from its position). */
  async state(outputId: string): Promise<OutputState> {
    return (await this.handler.load(outputStream(outputId))).state;
  }

  private async current(outputId: string): Promise<RecordedOutput> {
    const state = await this.state(outputId);
    if (!state.output || state.deleted) throw outputNotFound(outputId);
    return state as RecordedOutput;
  }

  private handle(outputId: string, command: OutputCommand): Promise<Handled<OutputState, OutputEvent>> {
    return this.handler.handle(outputStream(outputId), command);
  }

  private async settled(outputId: string, handled: Handled<OutputState, OutputEvent>): Promise<RecordedOutput> {
    if (handled.position > 0) await this.deps.projections.settle(handled.position);
    return handled.state as RecordedOutput;
  }

  private at(): string {
    return new Date(this.deps.now?.() ?? Date.now()).toISOString();
  }
}

function refuseOtherFields(type: OutputType, input: Record<string, unknown>): void {
  for (const field of FIELDS_OF[type].other)
    if (input[field] !== undefined) throw invalidField(`/${field}`, `is not a field of a ${type} output`);
}

function checkUrl(type: OutputType, url: string): void {
  const refusal = outputUrlRefusal(type, url);
  if (refusal) throw invalidField('/url', refusal);
}

function checkedTemplate(path: string, template: string, type: OutputType): string {
  const refusal = templateRefusal(template, type);
  if (refusal) throw invalidField(path, refusal);
  return template;
}
