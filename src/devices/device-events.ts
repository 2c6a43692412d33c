/**
 * Events of a device's registry stream (`device-<id>`): its creation, changes, key rotations, its hook
 * configuration and its deletion. One decider (device-decider.ts) writes it. The stream outlives the
 * device, which is what keeps a used id taken.
 *
 * Since schema version 2 the events that change what GET /devices answers carry `at` (when it was
 * decided), so that the answer to a command is built from the decided state; version-1 events get it
 * from their stored time when they are read (device-upcasters.ts).
 *
 * HooksConfigured carries the whole configuration, signing secret included: the log is the only place it
 * is kept. Anything that shows these events to people must redact `data.secret` and mask the credentials
 * of `data.url`. With ENCRYPTION_KEY set, the secret is sealed, and a URL with credentials is recorded
 * masked with the URL itself sealed in `sealedUrl` (src/webhooks/hook-secrets.ts); events written before
 * (or without the key) hold them in clear.
 */
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

/** Everything on a device's registry stream. */
export type DeviceStreamEvent = DeviceEvent | HookEvent;

export type DeviceEventType = DeviceEvent['type'];

export const DEVICE_EVENT_TYPES: ReadonlySet<string> = new Set<DeviceEventType>([
  'DeviceCreated',
  'DeviceUpdated',
  'DeviceKeyRotated',
  'DeviceDeleted',
]);
export const HOOK_EVENT_TYPES: ReadonlySet<string> = new Set<HookEvent['type']>(['HooksConfigured', 'HooksRemoved']);
export const DEVICE_STREAM_EVENT_TYPES: ReadonlySet<string> = new Set([...DEVICE_EVENT_TYPES, ...HOOK_EVENT_TYPES]);
