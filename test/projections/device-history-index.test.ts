/**
 * The device history index (src/projections/device-history-index.ts, read model `device-streams`), fed events
 * directly: which streams hold a device's events, named by the first event of each stream, whatever its type.
 */
import { describe, it } from 'vitest';
import type { TypedEvent } from '../../src/eventstore/typed-events.js';
import { DeviceHistoryIndex } from '../../src/projections/device-history-index.js';
import { type GivenEvent, readModelSpecification } from '../support/read-model-specification.js';

const spec = readModelSpecification<TypedEvent, DeviceHistoryIndex>((db) => new DeviceHistoryIndex(db));

const on = (streamId: string, type: string, data: unknown): GivenEvent<TypedEvent> => ({ streamId, type, data });

describe('device history index', () => {
  it('lists each stream whose first event names the device, by stream id, once however many events follow', () => {
    spec
      .given(
        on('device-d1', 'DeviceCreated', { deviceId: 'd1', name: 'One' }),
        on('session-d1', 'SessionStateChanged', { deviceId: 'd1', state: 'connecting' }),
        on('device-d2', 'DeviceCreated', { deviceId: 'd2', name: 'Two' }),
      )
      .given(
        on('session-d1', 'SessionStateChanged', { deviceId: 'd1', state: 'online' }),
        on('outbox-d1', 'OutboxMessageQueued', { deviceId: 'd1', outboxId: 'o1' }),
        on('device-d1', 'DeviceUpdated', { deviceId: 'd1', name: 'Renamed' }),
      )
      .then((index) => index.streamsOf('d1'), ['device-d1', 'outbox-d1', 'session-d1'])
      .then((index) => index.streamsOf('d2'), ['device-d2'])
      .then((index) => index.streamsOf('nobody'), []);
  });

  it('goes by the first event of a stream only: a later event naming another device adds nothing', () => {
    spec
      .given(
        on('inbox-d1', 'MessageReceived', { deviceId: 'd1', waMessageId: 'W1' }),
        on('inbox-d1', 'MessageReceived', { deviceId: 'd2', waMessageId: 'W2' }),
      )
      .then((index) => index.streamsOf('d1'), ['inbox-d1'])
      .then((index) => index.streamsOf('d2'), []);
  });

  it('skips a first event that names no device, and keeps the streams of a deleted device (its history stays)', () => {
    spec
      .given(
        on('lease-d1', 'LeaseAcquired', { owner: 'w1' }),
        on('lease-d1', 'LeaseRenewed', { deviceId: 'd1' }),
        on('odd-1', 'Odd', { deviceId: 42 }),
        on('odd-2', 'Odd', null),
        on('device-d1', 'DeviceCreated', { deviceId: 'd1' }),
        on('device-d1', 'DeviceDeleted', { deviceId: 'd1' }),
      )
      .then((index) => index.streamsOf('d1'), ['device-d1']);
  });
});
