/**
 * The decider of a device's health stream (`health-<deviceId>`): a judgement of the watchdog is recorded when it
 * changes the health, nothing when the stream says so already (another look, another process).
 */
import type { Decider } from '../commands/decider.js';
import { HEALTH_EVENT_TYPES, type HealthEvent, type SessionHealth } from './health-events.js';

export interface HealthState {
  health: SessionHealth;
}

export type HealthCommand =
  | { type: 'ReportSilent'; deviceId: string; silentSince: string; rebooting: boolean }
  | { type: 'ReportHeard'; deviceId: string };

export const healthDecider: Decider<HealthState, HealthCommand, HealthEvent> = {
  eventTypes: HEALTH_EVENT_TYPES,
  initialState: () => ({ health: 'ok' }),
  evolve: (_state, event) => ({ health: event.data.health }),
  decide(command, state) {
    const { deviceId } = command;
    if (command.type === 'ReportSilent') {
      if (state.health === 'silent') return [];
      const { silentSince, rebooting } = command;
      return [
        {
          type: 'SessionHealthChanged',
          data: { deviceId, health: 'silent', previousHealth: state.health, reason: 'silent', silentSince, rebooting },
        },
      ];
    }
    if (state.health === 'ok') return [];
    return [
      {
        type: 'SessionHealthChanged',
        data: { deviceId, health: 'ok', previousHealth: state.health, reason: 'heard' },
      },
    ];
  },
};
