/**
 * GET / PATCH /settings: the one writer of `settings-<deviceId>` (settings-decider.ts). A proxy URL is
 * checked (scheme, and the outbound guard's address rule) and split into its shown URL and credentials
 * before it is recorded, the credentials sealed when ENCRYPTION_KEY is set; answers never carry them. The
 * proxy sent back as answers show it keeps the stored one (a client that PATCHes the whole object it read);
 * `***` credentials otherwise are refused.
 */
import { CommandHandler } from '../commands/command-handler.js';
import { invalidField } from '../errors/domain-error.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import type { SealedText } from '../secrets/sealed-text.js';
import { proxySettingOf, sealedProxy } from './proxy-url.js';
import { type PacingPatch, type PacingView, checkPacingPatch, pacingViewOf } from './pacing-patch.js';
import { type SettingsCommand, settingsDecider } from './settings-decider.js';
import { type DeviceSettings, type HistorySyncSetting, type SettingsEvent, settingsStream } from './settings-events.js';
import type { SettingsReadModel } from './settings-read-model.js';

export interface SettingsView {
  rejectCalls: boolean;
  rejectCallsMessage: string | null;
  /** The proxy's URL, credentials shown as `***`. */
  proxy: string | null;
  pacing: PacingView;
  historySync: HistorySyncSetting;
}

export type { PacingPatch, PacingView } from './pacing-patch.js';

export interface SettingsPatch {
  rejectCalls?: boolean;
  rejectCallsMessage?: string | null;
  proxy?: string | null;
  pacing?: PacingPatch;
  historySync?: HistorySyncSetting;
}

export class SettingsCommands {
  private readonly handler: CommandHandler<DeviceSettings, SettingsCommand, SettingsEvent>;

  constructor(
    private readonly deps: {
      store: EventStore;
      settings: SettingsReadModel;
      projections: ReadModelProgress;
      /** Why a proxy host must not be dialled (the outbound network guard), undefined when it may. */
      addressRefusal: (httpUrl: string) => string | undefined;
      /** ENCRYPTION_KEY's sealing: proxy credentials are recorded sealed when it is set. */
      sealed: SealedText;
      /** Told after a change was recorded (the drainer looks at a deferred outbox again). */
      onChange?: (deviceId: string) => void;
    },
  ) {
    this.handler = new CommandHandler({ store: deps.store, decider: settingsDecider, snapshots: { every: 50 } });
  }

  view(deviceId: string): SettingsView {
    return viewOf(this.deps.settings.recorded(deviceId));
  }

  async change(deviceId: string, patch: SettingsPatch): Promise<SettingsView> {
    const change: Partial<DeviceSettings> = {};
    if (patch.rejectCalls !== undefined) change.rejectCalls = patch.rejectCalls;
    if (patch.rejectCallsMessage !== undefined) change.rejectCallsMessage = patch.rejectCallsMessage;
    if (patch.historySync !== undefined) change.historySync = patch.historySync;
    if (patch.proxy !== undefined) {
      if (patch.proxy === null) change.proxy = null;
      else if (patch.proxy === this.deps.settings.recorded(deviceId).proxy?.url) {
        // The URL as answers show it (credentials `***`), sent back with the rest of the object: the stored proxy stays as it is.
      } else {
        const proxy = proxySettingOf(patch.proxy, this.deps.addressRefusal);
        if (typeof proxy === 'string')
          throw invalidField('/proxy', proxy.replace(/^destination refused: the URL /, ''));
        // Sealed credentials differ every time they are sealed: the same proxy again is no change.
        if (!this.isCurrent(deviceId, proxy)) change.proxy = sealedProxy(proxy, deviceId, this.deps.sealed);
      }
    }
    // Merged by the decider with the pacing its stream holds (the read model may not have the latest change yet).
    if (patch.pacing !== undefined) checkPacingPatch(patch.pacing);
    const handled = await this.handler.handle(settingsStream(deviceId), {
      type: 'ChangeSettings',
      deviceId,
      change,
      ...(patch.pacing === undefined ? {} : { pacing: patch.pacing }),
    });
    if (handled.position > 0) {
      await this.deps.projections.settle(handled.position);
      this.deps.onChange?.(deviceId);
    }
    return viewOf(handled.state);
  }

  private isCurrent(deviceId: string, proxy: NonNullable<DeviceSettings['proxy']>): boolean {
    try {
      return JSON.stringify(this.deps.settings.get(deviceId).proxy) === JSON.stringify(proxy);
    } catch {
      return false; // sealed with another key: the new credentials replace them
    }
  }
}

export const viewOf = (settings: DeviceSettings): SettingsView => ({
  rejectCalls: settings.rejectCalls,
  rejectCallsMessage: settings.rejectCallsMessage,
  proxy: settings.proxy?.url ?? null,
  pacing: pacingViewOf(settings.pacing),
  historySync: settings.historySync,
});
