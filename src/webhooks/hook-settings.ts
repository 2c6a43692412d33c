/**
 * Commands on a device's hook configuration. The configuration lives on the device's registry stream,
 * so these commands go through that stream's one decider and writer (src/devices/device-decider.ts).
 * The answer is the decided configuration, given once the webhooks read model includes it, so that the
 * next event is judged by the new setting.
 */
import { randomBytes } from 'node:crypto';
import type { DeviceCommands } from '../devices/device-registry.js';
import { deviceStream } from '../devices/device-events.js';
import { DomainError, invalidField } from '../errors/domain-error.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import { hasMaskedCredentials, maskUrlCredentials } from '../secrets/url-credentials.js';
import type { HookEventName } from './envelope.js';
import type { HookSecrets } from './hook-secrets.js';
import { MAX_WEBHOOKS_PER_DEVICE, tooManyWebhooks } from './webhook-settings-decider.js';
import { DEFAULT_WEBHOOK_ID } from './webhook-settings-events.js';
import type { HookView, WebhooksReadModel } from './webhooks-read-model.js';

export interface ConfigureHooks {
  url: string;
  events: HookEventName[];
  rotateSecret?: boolean;
}

/** `whsec_` + base64 of 32 random bytes: the secret format the standardwebhooks library reads. */
export const newHookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

export const hooksNotConfigured = (deviceId: string) =>
  new DomainError('hooks_not_configured', `device "${deviceId}" has no hook configuration`);

export class HookSettings {
  constructor(
    private readonly commands: DeviceCommands,
    private readonly progress: ReadModelProgress,
    private readonly model: WebhooksReadModel,
    private readonly secrets: HookSecrets,
  ) {}

  /**
   * Sets the configuration; the secret is made on the first call and kept until rotated or removed. The URL
   * as answers show it (credentials `***`) keeps the stored one (a client that PUTs back the object it read).
   */
  async configure(deviceId: string, input: ConfigureHooks): Promise<HookView> {
    const url = this.urlOf(deviceId, input.url);
    // The hook is one of the device's webhooks (`default`): a new one counts against their limit.
    if (!this.model.configured(deviceId, DEFAULT_WEBHOOK_ID) && this.model.countOf(deviceId) >= MAX_WEBHOOKS_PER_DEVICE)
      throw tooManyWebhooks(MAX_WEBHOOKS_PER_DEVICE);
    const { state, position } = await this.commands.handle(deviceStream(deviceId), {
      type: 'ConfigureHooks',
      deviceId,
      ...this.secrets.sealUrl(deviceId, url),
      events: input.events,
      secret: this.secrets.seal(deviceId, newHookSecret()),
      rotateSecret: input.rotateSecret === true,
      at: new Date().toISOString(),
    });
    await this.progress.settle(position);
    const hook = state.status === 'live' ? state.hook : undefined;
    if (!hook) throw new Error('a hook configuration that was decided is missing from the state'); // the decider rules it out
    return {
      url: maskUrlCredentials(hook.url),
      events: hook.events as HookEventName[],
      secret: this.secrets.open(deviceId, hook.secret),
      updatedAt: hook.updatedAt,
    };
  }

  /** Removes the configuration (and with it the secret); pending deliveries end. Nothing configured: nothing to do. */
  async remove(deviceId: string): Promise<void> {
    const { position } = await this.commands.handle(deviceStream(deviceId), { type: 'RemoveHooks', deviceId });
    await this.progress.settle(position);
  }

  /** The configuration as answers show it: the secret, and the URL with its credentials masked. */
  view(deviceId: string): HookView | undefined {
    const hook = this.model.hook(deviceId);
    return hook && { ...hook, url: maskUrlCredentials(hook.url) }; // a copy: the read model's view is shared
  }

  /** The URL to record: the stored one when `url` is how answers show it; `***` credentials otherwise are refused. */
  private urlOf(deviceId: string, url: string): string {
    if (!hasMaskedCredentials(url)) return url;
    let stored: string | undefined;
    try {
      stored = this.model.hookUrl(deviceId);
    } catch {
      stored = undefined; // sealed with another key: only new credentials replace it
    }
    if (stored !== undefined && maskUrlCredentials(stored) === url) return stored;
    throw invalidField(
      '/url',
      'has `***` credentials, the mask answers show in place of the stored ones: send the real credentials, or the URL exactly as GET /hooks shows it to keep the stored one',
    );
  }
}
