/**
 * The decider of a device's registry stream (`device-<id>`): the device itself and its hook
 * configuration. Pure: the caller brings whatever is random or timed (keys, secrets, the time).
 */
import type { Scope } from '../auth/scopes.js';
import type { Decider } from '../commands/decider.js';
import type { Engine } from '../config.js';
import { DomainError, deviceNotFound } from '../errors/domain-error.js';
import { DEVICE_STREAM_EVENT_TYPES, type DeviceStreamEvent, type HookConfiguration } from './device-events.js';

export interface DeviceRecord {
  id: string;
  name: string;
  engine: Engine;
  metadata: Record<string, unknown>;
  keyHash: string;
  createdAt: string;
  updatedAt: string;
}

/** The hook configuration and when it was last set. */
export type HookSetting = HookConfiguration & { updatedAt: string };

/** A scoped key of the device (not the one made with it, which is `DeviceRecord.keyHash`). */
export interface ScopedKeyRecord {
  keyId: string;
  name: string;
  scopes: Scope[];
  keyHash: string;
  createdAt: string;
}

/** At most this many scoped keys per device. */
export const MAX_SCOPED_KEYS = 50;

export type DeviceState =
  | { status: 'none' }
  | { status: 'live'; device: DeviceRecord; hook?: HookSetting; keys?: Readonly<Record<string, ScopedKeyRecord>> }
  /** Deleted devices keep their id taken. */
  | { status: 'deleted' };

export type DeviceCommand =
  | {
      type: 'CreateDevice';
      deviceId: string;
      name: string;
      engine: Engine;
      metadata: Record<string, unknown>;
      keyHash: string;
      at: string;
    }
  | {
      type: 'UpdateDevice';
      deviceId: string;
      name?: string;
      metadata?: Record<string, unknown>;
      keyHash?: string;
      at: string;
    }
  | { type: 'DeleteDevice'; deviceId: string }
  /** `secret` is used when there is none yet or `rotateSecret` is set; otherwise the current one stays. */
  | {
      type: 'ConfigureHooks';
      deviceId: string;
      url: string;
      /** The URL sealed, when `url` is its masked form (src/webhooks/hook-secrets.ts). */
      sealedUrl?: string;
      events: string[];
      secret: string;
      rotateSecret: boolean;
      at: string;
    }
  | { type: 'RemoveHooks'; deviceId: string }
  | { type: 'CreateKey'; deviceId: string; keyId: string; name: string; scopes: Scope[]; keyHash: string; at: string }
  | { type: 'DeleteKey'; deviceId: string; keyId: string; at: string };

function live(state: DeviceState, deviceId: string): Extract<DeviceState, { status: 'live' }> {
  if (state.status !== 'live') throw deviceNotFound(deviceId);
  return state;
}

export const deviceDecider: Decider<DeviceState, DeviceCommand, DeviceStreamEvent> = {
  eventTypes: DEVICE_STREAM_EVENT_TYPES,

  initialState: () => ({ status: 'none' }),

  evolve(state, event) {
    switch (event.type) {
      case 'DeviceCreated': {
        const { deviceId, name, engine, metadata, keyHash, at } = event.data;
        return {
          status: 'live',
          device: { id: deviceId, name, engine, metadata, keyHash, createdAt: at, updatedAt: at },
        };
      }
      case 'DeviceUpdated': {
        if (state.status !== 'live') return state;
        const { name, metadata, at } = event.data;
        return {
          ...state,
          device: {
            ...state.device,
            ...(name === undefined ? {} : { name }),
            ...(metadata === undefined ? {} : { metadata }),
            updatedAt: at,
          },
        };
      }
      case 'DeviceKeyRotated':
        if (state.status !== 'live') return state;
        return { ...state, device: { ...state.device, keyHash: event.data.keyHash, updatedAt: event.data.at } };
      case 'DeviceDeleted':
        return { status: 'deleted' };
      case 'HooksConfigured': {
        if (state.status !== 'live') return state;
        const { url, sealedUrl, events, secret, at } = event.data;
        return {
          ...state,
          hook: { url, ...(sealedUrl === undefined ? {} : { sealedUrl }), events, secret, updatedAt: at },
        };
      }
      case 'HooksRemoved': {
        if (state.status !== 'live') return state;
        const { hook: _removed, ...rest } = state;
        return rest;
      }
      case 'DeviceKeyCreated': {
        if (state.status !== 'live') return state;
        const { keyId, name, scopes, keyHash, at } = event.data;
        return { ...state, keys: { ...state.keys, [keyId]: { keyId, name, scopes, keyHash, createdAt: at } } };
      }
      case 'DeviceKeyDeleted': {
        if (state.status !== 'live' || !state.keys) return state;
        const { [event.data.keyId]: _deleted, ...keys } = state.keys;
        return { ...state, keys };
      }
    }
  },

  decide(command, state) {
    const { deviceId } = command;
    switch (command.type) {
      case 'CreateDevice': {
        if (state.status !== 'none')
          throw new DomainError('device_exists', `device id "${deviceId}" is in use or was used before`);
        const { name, engine, metadata, keyHash, at } = command;
        return [{ type: 'DeviceCreated', data: { deviceId, name, engine, metadata, keyHash, at } }];
      }
      case 'UpdateDevice': {
        live(state, deviceId);
        const { name, metadata, keyHash, at } = command;
        const events: DeviceStreamEvent[] = [];
        if (name !== undefined || metadata !== undefined) {
          events.push({
            type: 'DeviceUpdated',
            data: {
              deviceId,
              ...(name === undefined ? {} : { name }),
              ...(metadata === undefined ? {} : { metadata }),
              at,
            },
          });
        }
        if (keyHash !== undefined) events.push({ type: 'DeviceKeyRotated', data: { deviceId, keyHash, at } });
        return events;
      }
      case 'DeleteDevice':
        live(state, deviceId);
        return [{ type: 'DeviceDeleted', data: { deviceId } }];
      case 'ConfigureHooks': {
        const { hook } = live(state, deviceId);
        const secret = hook && !command.rotateSecret ? hook.secret : command.secret;
        return [
          {
            type: 'HooksConfigured',
            data: {
              deviceId,
              url: command.url,
              ...(command.sealedUrl === undefined ? {} : { sealedUrl: command.sealedUrl }),
              events: command.events,
              secret,
              at: command.at,
            },
          },
        ];
      }
      case 'RemoveHooks':
        return live(state, deviceId).hook ? [{ type: 'HooksRemoved', data: { deviceId } }] : [];
      case 'CreateKey': {
        const { keys = {} } = live(state, deviceId);
        if (Object.keys(keys).length >= MAX_SCOPED_KEYS)
          throw new DomainError(
            'too_many_keys',
            `a device has at most ${MAX_SCOPED_KEYS} scoped keys; delete one first`,
          );
        if (keys[command.keyId]) throw new DomainError('concurrent_change', `key id "${command.keyId}" is taken`);
        const { keyId, name, scopes, keyHash, at } = command;
        return [{ type: 'DeviceKeyCreated', data: { deviceId, keyId, name, scopes, keyHash, at } }];
      }
      case 'DeleteKey': {
        const key = live(state, deviceId).keys?.[command.keyId];
        if (!key) throw new DomainError('not_found', `key "${command.keyId}" does not exist`);
        return [
          { type: 'DeviceKeyDeleted', data: { deviceId, keyId: key.keyId, keyHash: key.keyHash, at: command.at } },
        ];
      }
    }
  },
};
