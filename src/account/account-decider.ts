/**
 * The decider of a device's account stream (`account-<deviceId>`): the profile this device set and the
 * numbers the account blocks. Blocking a number already blocked (or a refresh that finds the same list)
 * records nothing.
 */
import type { Decider } from '../commands/decider.js';
import { ACCOUNT_EVENT_TYPES, type AccountEvent } from './account-events.js';

export interface AccountState {
  name?: string;
  about?: string;
  /** Sorted. */
  blocked: readonly string[];
}

export type AccountCommand =
  | { type: 'ChangeProfile'; deviceId: string; name?: string; about?: string }
  | { type: 'Block'; deviceId: string; number: string }
  | { type: 'Unblock'; deviceId: string; number: string }
  | { type: 'RefreshBlocklist'; deviceId: string; numbers: string[] };

const sorted = (numbers: Iterable<string>) => [...new Set(numbers)].sort();

export const accountDecider: Decider<AccountState, AccountCommand, AccountEvent> = {
  eventTypes: ACCOUNT_EVENT_TYPES,

  initialState: () => ({ blocked: [] }),

  evolve(state, event) {
    switch (event.type) {
      case 'ProfileChanged':
        return {
          ...state,
          ...(event.data.name === undefined ? {} : { name: event.data.name }),
          ...(event.data.about === undefined ? {} : { about: event.data.about }),
        };
      case 'ContactBlocked':
        return { ...state, blocked: sorted([...state.blocked, event.data.number]) };
      case 'ContactUnblocked':
        return { ...state, blocked: state.blocked.filter((n) => n !== event.data.number) };
      case 'BlocklistRefreshed':
        return { ...state, blocked: sorted(event.data.numbers) };
    }
  },

  decide(command, state) {
    const { deviceId } = command;
    switch (command.type) {
      case 'ChangeProfile': {
        const name = command.name !== undefined && command.name !== state.name ? command.name : undefined;
        const about = command.about !== undefined && command.about !== state.about ? command.about : undefined;
        if (name === undefined && about === undefined) return [];
        return [
          {
            type: 'ProfileChanged',
            data: { deviceId, ...(name === undefined ? {} : { name }), ...(about === undefined ? {} : { about }) },
          },
        ];
      }
      case 'Block':
        return state.blocked.includes(command.number)
          ? []
          : [{ type: 'ContactBlocked', data: { deviceId, number: command.number } }];
      case 'Unblock':
        return state.blocked.includes(command.number)
          ? [{ type: 'ContactUnblocked', data: { deviceId, number: command.number } }]
          : [];
      case 'RefreshBlocklist': {
        const numbers = sorted(command.numbers);
        const same = numbers.length === state.blocked.length && numbers.every((n, i) => n === state.blocked[i]);
        return same ? [] : [{ type: 'BlocklistRefreshed', data: { deviceId, numbers } }];
      }
    }
  },
};
