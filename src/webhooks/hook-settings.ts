/**
 * Commands on a device's hook configuration. Each decides from the device's own stream (the source of
 * truth: is the device live, what is its current secret), appends at that stream's revision, and answers
 * once the webhooks read model includes the append, so that the next event is judged by the new setting.
 */
import { randomBytes } from 'node:crypto';
import { deviceStream } from '../devices/device-events.js';
import { type EventStore, type NewEvent, WrongExpectedRevisionError } from '../eventstore/event-store.js';
import { notFound } from '../http/problem.js';
import type { ProjectionRunner } from '../projections/projection-runner.js';
import type { WebhookEventKind } from './envelope.js';
import type { HookConfiguration, HookEvent } from './hook-events.js';
import type { HookView, WebhooksReadModel } from './webhooks-read-model.js';

export interface ConfigureHooks {
  url: string;
  events: WebhookEventKind[];
  rotateSecret?: boolean;
}

interface DeviceHooksState {
  revision: number;
  live: boolean;
  hook: HookConfiguration | undefined;
}

const MAX_ATTEMPTS = 5;

/** `whsec_` + base64 of 32 random bytes: the secret format the standardwebhooks library reads. */
export const newHookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

export class HookSettings {
  constructor(
    private readonly store: EventStore,
    private readonly runner: ProjectionRunner,
    private readonly model: WebhooksReadModel,
  ) {}

  /** Sets the configuration; the secret is made on the first call and kept until rotated or removed. */
  async configure(deviceId: string, input: ConfigureHooks): Promise<HookView> {
    const position = await this.decideAndAppend(deviceId, (state) => {
      const secret = !input.rotateSecret && state.hook ? state.hook.secret : newHookSecret();
      return { type: 'HooksConfigured', data: { deviceId, url: input.url, events: input.events, secret } };
    });
    await this.runner.waitFor(position ?? 0);
    const view = this.model.hook(deviceId);
    if (!view) throw notFound(`device "${deviceId}" does not exist`); // deleted in the meantime
    return view;
  }

  /** Removes the configuration (and with it the secret); pending deliveries end. Nothing configured: nothing to do. */
  async remove(deviceId: string): Promise<void> {
    const position = await this.decideAndAppend(deviceId, (state) => (state.hook ? { type: 'HooksRemoved', data: { deviceId } } : undefined));
    if (position !== undefined) await this.runner.waitFor(position);
  }

  view(deviceId: string): HookView | undefined {
    return this.model.hook(deviceId);
  }

  private async decideAndAppend(deviceId: string, decide: (state: DeviceHooksState) => HookEvent | undefined): Promise<number | undefined> {
    for (let attempt = 1; ; attempt++) {
      const state = await this.load(deviceId);
      if (!state.live) throw notFound(`device "${deviceId}" does not exist`);
      const event = decide(state);
      if (!event) return undefined;
      try {
        const result = await this.store.append(deviceStream(deviceId), [event as NewEvent], { expectedRevision: state.revision });
        return result.position;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError) || attempt >= MAX_ATTEMPTS) throw error;
      }
    }
  }

  /** A registry stream holds a handful of events, so folding all of it is cheap. */
  private async load(deviceId: string): Promise<DeviceHooksState> {
    const state: DeviceHooksState = { revision: -1, live: false, hook: undefined };
    for (const stored of await this.store.readStream(deviceStream(deviceId))) {
      state.revision = stored.revision;
      const event = stored as unknown as HookEvent | { type: 'DeviceCreated' | 'DeviceDeleted' };
      if (event.type === 'DeviceCreated') state.live = true;
      else if (event.type === 'DeviceDeleted') state.live = false;
      else if (event.type === 'HooksConfigured') state.hook = { url: event.data.url, events: event.data.events, secret: event.data.secret };
      else if (event.type === 'HooksRemoved') state.hook = undefined;
    }
    return state;
  }
}
