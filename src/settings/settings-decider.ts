/**
 * The decider of a device's settings stream (`settings-<deviceId>`): a change records the settings that
 * differ from what the stream holds, nothing when none does.
 */
import type { Decider } from '../commands/decider.js';
import { DEFAULT_SETTINGS, type DeviceSettings, SETTINGS_EVENT_TYPES, type SettingsEvent } from './settings-events.js';

export type SettingsCommand = { type: 'ChangeSettings'; deviceId: string; change: Partial<DeviceSettings> };

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export const settingsDecider: Decider<DeviceSettings, SettingsCommand, SettingsEvent> = {
  eventTypes: SETTINGS_EVENT_TYPES,
  initialState: () => DEFAULT_SETTINGS,
  evolve(state, event) {
    const { deviceId: _deviceId, ...change } = event.data;
    return { ...state, ...change };
  },
  decide({ deviceId, change }, state) {
    const changed: Partial<DeviceSettings> = {};
    for (const key of Object.keys(change) as Array<keyof DeviceSettings>) {
      if (change[key] !== undefined && !same(change[key], state[key])) Object.assign(changed, { [key]: change[key] });
    }
    return Object.keys(changed).length === 0 ? [] : [{ type: 'DeviceSettingsChanged', data: { deviceId, ...changed } }];
  },
};
