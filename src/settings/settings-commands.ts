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
import { DEFAULT_PACING, type PacingPolicy, isTimeZone } from '../outbox/pacing/pacing.js';
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

/** The pacing as answers show it: every part, null where it is off. */
export interface PacingView {
  timezone: string;
  warmup: NonNullable<PacingPolicy['warmup']> | null;
  dailyCap: number | null;
  quietHours: NonNullable<PacingPolicy['quietHours']> | null;
  unansweredLimit: number | null;
  typing: boolean;
}

/** Each part optional; null turns one off. */
export type PacingPatch = Partial<PacingView>;

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
    if (patch.pacing !== undefined)
      change.pacing = pacingOf(this.deps.settings.recorded(deviceId).pacing, patch.pacing);
    const handled = await this.handler.handle(settingsStream(deviceId), { type: 'ChangeSettings', deviceId, change });
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

export function pacingViewOf(pacing: PacingPolicy = DEFAULT_PACING): PacingView {
  return {
    timezone: pacing.timezone,
    warmup: pacing.warmup ?? null,
    dailyCap: pacing.dailyCap ?? null,
    quietHours: pacing.quietHours ?? null,
    unansweredLimit: pacing.unansweredLimit ?? null,
    typing: pacing.typing ?? false,
  };
}

/** The recorded pacing with the patch's parts put in (null: that part off); an unknown time zone is a 400. */
function pacingOf(current: PacingPolicy = DEFAULT_PACING, patch: PacingPatch): PacingPolicy {
  if (patch.timezone !== undefined && !isTimeZone(patch.timezone))
    throw invalidField(
      '/pacing/timezone',
      `is not an IANA time zone this gateway knows (e.g. Europe/Berlin, UTC): ${patch.timezone}`,
    );
  if (patch.warmup && patch.warmup.maxPerDay < patch.warmup.startPerDay)
    throw invalidField('/pacing/warmup/maxPerDay', 'must be at least startPerDay');
  const merged: PacingView = { ...pacingViewOf(current) };
  for (const key of Object.keys(patch) as Array<keyof PacingView>) {
    if (patch[key] !== undefined) Object.assign(merged, { [key]: patch[key] });
  }
  // Recorded without the parts that are off.
  const policy: PacingPolicy = { timezone: merged.timezone };
  if (merged.warmup) policy.warmup = merged.warmup;
  if (merged.dailyCap !== null) policy.dailyCap = merged.dailyCap;
  if (merged.quietHours) policy.quietHours = merged.quietHours;
  if (merged.unansweredLimit !== null) policy.unansweredLimit = merged.unansweredLimit;
  if (merged.typing) policy.typing = true;
  return policy;
}
