/**
 * Events of a device's settings stream (`settings-<deviceId>`): whether calls are rejected (and what the
 * caller is told), and the proxy the device's connection goes through. The proxy's credentials are kept
 * apart from its URL, which shows them as `***`: sealed under `sealedCredentials` when ENCRYPTION_KEY is set
 * (src/settings/proxy-url.ts), in clear under `credentials` without it (and in events written before
 * credentials were sealed). History views redact both (src/history/redact.ts).
 */
import type { PacingPolicy } from '../outbox/pacing/pacing.js';

export const settingsStream = (deviceId: string) => `settings-${deviceId}`;

export const PROXY_PROTOCOLS = ['http:', 'https:', 'socks5:'] as const;

export interface ProxyCredentials {
  username: string;
  password: string;
}

export interface ProxySetting {
  /** The proxy's URL, credentials shown as `***` (e.g. `socks5://***:***@proxy.example:1080`). */
  url: string;
  /** In clear: recorded without ENCRYPTION_KEY; what the engines get (the settings read model opens sealed ones). */
  credentials?: ProxyCredentials;
  /** The credentials (JSON) sealed with ENCRYPTION_KEY: what is recorded when the key is set. */
  sealedCredentials?: string;
}

export interface DeviceSettings {
  rejectCalls: boolean;
  /** Sent to a caller whose call was rejected; null: none. */
  rejectCallsMessage: string | null;
  proxy: ProxySetting | null;
  /** How the device's sends are paced (src/outbox/pacing); absent in events before pacing: none but UTC. */
  pacing?: PacingPolicy;
  /** What of the account's history is imported when it links: nothing, what the phone sends (recent), or all (full). */
  historySync: HistorySyncSetting;
}

export const HISTORY_SYNC_SETTINGS = ['none', 'recent', 'full'] as const;
export type HistorySyncSetting = (typeof HISTORY_SYNC_SETTINGS)[number];

export const DEFAULT_SETTINGS: DeviceSettings = {
  rejectCalls: false,
  rejectCallsMessage: null,
  proxy: null,
  historySync: 'recent',
};

export interface DeviceSettingsChangedData extends Partial<DeviceSettings> {
  deviceId: string;
}

export type SettingsEvent = { type: 'DeviceSettingsChanged'; data: DeviceSettingsChangedData };

export const SETTINGS_EVENT_TYPES: ReadonlySet<string> = new Set(['DeviceSettingsChanged']);
