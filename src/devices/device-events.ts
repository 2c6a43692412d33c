/**
 * Events of a device's registry stream (`device-<id>`): creation, changes, key rotations, hook configuration
 * and deletion, written by one decider (device-decider.ts). The stream outlives the device, which keeps a
 * used id taken. Schema version 2 added `at` (docs/architecture.md, "Event schemas and upcasting").
 * HooksConfigured carries the signing secret, kept nowhere else: whatever shows these events must redact
 * `data.secret` and mask `data.url`'s credentials (sealed with ENCRYPTION_KEY: src/webhooks/hook-secrets.ts).
 */
import type { Scope } from '../auth/scopes.js';
import type { Engine } from '../config.js';

export const deviceStream = (deviceId: string) => `device-${deviceId}`;
export const DEVICE_STREAM_PREFIX = 'device-';

export interface HookConfiguration<Kind extends string = string> {
  /** The receiver's URL; masked (`***` for its credentials) when `sealedUrl` is set. */
  url: string;
  /** The URL with its credentials, sealed with ENCRYPTION_KEY: set when it has credentials and the key is set. */
  sealedUrl?: string;
  /** Event kinds sent to the receiver (src/webhooks/envelope.ts names them). */
  events: Kind[];
  /** `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
  secret: string;
}

export type DeviceCreatedData = {
  deviceId: string;
  name: string;
  engine: Engine;
  metadata: Record<string, unknown>;
  keyHash: string;
  at: string;
};
export type DeviceUpdatedData = { deviceId: string; name?: string; metadata?: Record<string, unknown>; at: string };
export type DeviceKeyRotatedData = { deviceId: string; keyHash: string; at: string };

export type DeviceEvent =
  | { type: 'DeviceCreated'; data: DeviceCreatedData }
  | { type: 'DeviceUpdated'; data: DeviceUpdatedData }
  | { type: 'DeviceKeyRotated'; data: DeviceKeyRotatedData }
  | { type: 'DeviceDeleted'; data: { deviceId: string } };

export type HookEvent =
  | { type: 'HooksConfigured'; data: { deviceId: string; at: string } & HookConfiguration }
  | { type: 'HooksRemoved'; data: { deviceId: string } };

/** Scoped keys (docs/api-guide.md, "Scoped keys"): `keyHash` is the key's SHA-256, the key itself is never recorded. */
export type DeviceKeyCreatedData = {
  deviceId: string;
  keyId: string;
  name: string;
  scopes: Scope[];
  keyHash: string;
  at: string;
};
export type DeviceKeyDeletedData = { deviceId: string; keyId: string; keyHash: string; at: string };

export type ScopedKeyEvent =
  { type: 'DeviceKeyCreated'; data: DeviceKeyCreatedData } | { type: 'DeviceKeyDeleted'; data: DeviceKeyDeletedData };

/** Everything on a device's registry stream. */
export type DeviceStreamEvent = DeviceEvent | HookEvent | ScopedKeyEvent;

export type DeviceEventType = DeviceEvent['type'];

export const DEVICE_EVENT_TYPES: ReadonlySet<string> = new Set<DeviceEventType>([
  'DeviceCreated',
  'DeviceUpdated',
  'DeviceKeyRotated',
  'DeviceDeleted',
]);
export const HOOK_EVENT_TYPES: ReadonlySet<string> = new Set<HookEvent['type']>(['HooksConfigured', 'HooksRemoved']);
export const SCOPED_KEY_EVENT_TYPES: ReadonlySet<string> = new Set<ScopedKeyEvent['type']>([
  'DeviceKeyCreated',
  'DeviceKeyDeleted',
]);
export const DEVICE_STREAM_EVENT_TYPES: ReadonlySet<string> = new Set([
  ...DEVICE_EVENT_TYPES,
  ...HOOK_EVENT_TYPES,
  ...SCOPED_KEY_EVENT_TYPES,
]);
