/**
 * The decider of a device's settings stream (`settings-<deviceId>`): a change records the settings that
 * differ from what the stream holds, nothing when none does. A pacing change names only the parts it changes,
 * merged here with the policy the stream holds (never with the read model, which lags).
 */
import type { Decider } from '../commands/decider.js';
import { type PacingPatch, mergePacing } from './pacing-patch.js';
import { DEFAULT_SETTINGS, type DeviceSettings, SETTINGS_EVENT_TYPES, type SettingsEvent } from './settings-events.js';

/** `pacing`: the parts of the pacing to change, merged with the policy the stream holds. */
export type SettingsCommand = {
  type: 'ChangeSettings';
  deviceId: string;
  change: Partial<Omit<DeviceSettings, 'pacing'>>;
  pacing?: PacingPatch;
};

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export const settingsDecider: Decider<DeviceSettings, SettingsCommand, SettingsEvent> = {
  eventTypes: SETTINGS_EVENT_TYPES,
  initialState: () => DEFAULT_SETTINGS,
  evolve(state, event) {
    const { deviceId: _deviceId, ...change } = event.data;
    return { ...state, ...change };
  },
  decide({ deviceId, change, pacing }, state) {
    const wanted: Partial<DeviceSettings> = pacing ? { ...change, pacing: mergePacing(state.pacing, pacing) } : change;
    const changed: Partial<DeviceSettings> = {};
    for (const key of Object.keys(wanted) as Array<keyof DeviceSettings>) {
      if (wanted[key] !== undefined && !same(wanted[key], state[key])) Object.assign(changed, { [key]: wanted[key] });
    }
    return Object.keys(changed).length === 0 ? [] : [{ type: 'DeviceSettingsChanged', data: { deviceId, ...changed } }];
  },
};
