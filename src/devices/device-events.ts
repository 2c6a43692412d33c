/**
 * Events of a device's registry stream (`device-<id>`): its creation, changes, key rotations and deletion.
 * The stream outlives the device, which is what keeps a used id taken.
 */
import type { Engine } from '../config.js';

export const deviceStream = (deviceId: string) => `device-${deviceId}`;
export const DEVICE_STREAM_PREFIX = 'device-';

export type DeviceEvent =
  | { type: 'DeviceCreated'; data: { deviceId: string; name: string; engine: Engine; metadata: Record<string, unknown>; keyHash: string } }
  | { type: 'DeviceUpdated'; data: { deviceId: string; name?: string; metadata?: Record<string, unknown> } }
  | { type: 'DeviceKeyRotated'; data: { deviceId: string; keyHash: string } }
  | { type: 'DeviceDeleted'; data: { deviceId: string } };

export type DeviceEventType = DeviceEvent['type'];

export const DEVICE_EVENT_TYPES: ReadonlySet<string> = new Set<DeviceEventType>([
  'DeviceCreated',
  'DeviceUpdated',
  'DeviceKeyRotated',
  'DeviceDeleted',
]);
