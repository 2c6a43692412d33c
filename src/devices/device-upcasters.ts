/**
 * Schema versions of the registry stream's events (src/eventstore/upcasting.ts). Version 2 added `at`,
 * the time the change was decided; a version-1 event gets the time it was stored, which is what the
 * devices read model showed for it before.
 */
import type { StoredEvent } from '../eventstore/event-store.js';
import type { Upcaster } from '../eventstore/upcasting.js';

const addDecidedAt = (type: string): Upcaster => ({
  type,
  fromVersion: 1,
  upcast: (data: unknown, stored: StoredEvent) => ({ ...(data as object), at: stored.createdAt.toISOString() }),
});

export const DEVICE_UPCASTERS: readonly Upcaster[] = [
  'DeviceCreated',
  'DeviceUpdated',
  'DeviceKeyRotated',
  'HooksConfigured',
].map(addDecidedAt);
