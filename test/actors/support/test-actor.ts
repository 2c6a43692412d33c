/**
 * A device actor as tests make one: device `dev`, the given engine and store, a machine with the given
 * reconnection settings, received messages to the store, a silent log. Anything else is passed through.
 */
import { pino } from 'pino';
import { DeviceActor, type DeviceActorOptions } from '../../../src/actors/device-actor.js';
import { createDeviceMachine } from '../../../src/sessions/device-machine.js';
import { StoreMessageSink } from '../../../src/actors/message-sink.js';
import type { ReconnectSettings } from '../../../src/sessions/reconnect-policy.js';
import type { Engine } from '../../../src/engines/engine.js';
import type { EventStore } from '../../../src/eventstore/event-store.js';
import { outboxReceipts } from '../../support/outbox-receipts.js';

export function testActor(
  engine: Engine,
  store: EventStore,
  reconnect: ReconnectSettings,
  options: Partial<Omit<DeviceActorOptions, 'resolveEngine' | 'store' | 'machine'>> = {},
): DeviceActor {
  return new DeviceActor({
    deviceId: 'dev',
    resolveEngine: async () => engine,
    store,
    machine: createDeviceMachine(reconnect),
    sink: new StoreMessageSink(store, outboxReceipts(store)),
    log: pino({ level: 'silent' }),
    onTransition: () => undefined,
    ...options,
  });
}
