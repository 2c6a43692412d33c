/**
 * Every event type whose schema changed, and how its older versions are read (src/eventstore/upcasting.ts).
 * Each process that reads the log wraps its store with this, so that the code sees current schemas only.
 */
import { DEVICE_UPCASTERS } from './devices/device-upcasters.js';
import type { EventStore } from './eventstore/event-store.js';
import { UpcastingEventStore, Upcasters } from './eventstore/upcasting.js';
import { INBOX_UPCASTERS } from './inbox/inbox-upcasters.js';

export const UPCASTERS = new Upcasters([...DEVICE_UPCASTERS, ...INBOX_UPCASTERS]);

export const withCurrentSchemas = (store: EventStore): EventStore => new UpcastingEventStore(store, UPCASTERS);
