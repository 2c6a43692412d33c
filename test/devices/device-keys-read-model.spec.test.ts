/**
 * The scoped keys read model (src/devices/device-keys-read-model.ts) as given / then: a device's live keys, by hash
 * and by device, a deleted key or device leaving nothing (when each was last used: device-keys-read-model.test.ts).
 */
import { describe, it } from 'vitest';
import type { Scope } from '../../src/auth/scopes.js';
import type { DeviceEvent, ScopedKeyEvent } from '../../src/devices/device-events.js';
import { DeviceKeysReadModel } from '../../src/devices/device-keys-read-model.js';
import { type GivenEvent, readModelSpecification } from '../support/read-model-specification.js';

type Event = ScopedKeyEvent | DeviceEvent;

const spec = readModelSpecification<Event, DeviceKeysReadModel>((db) => new DeviceKeysReadModel(db));
const at = (minute: number) => `2026-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
const created = (deviceId: string, keyId: string, minute: number, scopes: Scope[] = ['read']): GivenEvent<Event> => ({
  type: 'DeviceKeyCreated',
  data: { deviceId, keyId, name: `key ${keyId}`, scopes, keyHash: `hash-${deviceId}-${keyId}`, at: at(minute) },
});
const removed = (deviceId: string, keyId: string): GivenEvent<Event> => ({
  type: 'DeviceKeyDeleted',
  data: { deviceId, keyId, keyHash: `hash-${deviceId}-${keyId}`, at: at(59) },
});
const deleted = (deviceId: string): Event => ({ type: 'DeviceDeleted', data: { deviceId } });
const view = (deviceId: string, keyId: string, minute: number, scopes: Scope[] = ['read']) => ({
  keyId,
  deviceId,
  name: `key ${keyId}`,
  scopes,
  createdAt: at(minute),
});
const keyIds = (deviceId: string) => (model: DeviceKeysReadModel) => model.list(deviceId).map((key) => key.keyId);

describe('device keys read model (given / then)', () => {
  it("answers a key by its hash and a device's keys oldest first, never used yet, over several batches", () => {
    spec
      .given(created('d1', 'k2', 2, ['read', 'send']))
      .given(created('d1', 'k1', 1), created('d2', 'k1', 3))
      .then((model) => model.byHash('hash-d1-k2'), view('d1', 'k2', 2, ['read', 'send']))
      .then((model) => model.byHash('hash-d2-k1'), view('d2', 'k1', 3))
      .then((model) => model.byHash('hash-unknown'), undefined)
      .then(
        (model) => model.list('d1'),
        [
          { ...view('d1', 'k1', 1), lastUsedAt: null },
          { ...view('d1', 'k2', 2, ['read', 'send']), lastUsedAt: null },
        ],
      )
      .then(keyIds('d3'), []);
  });

  it('a deleted key is found no more, also when it was asked for before (a cached key goes)', () => {
    spec
      .given(created('d1', 'k1', 1), created('d1', 'k2', 2))
      .then((model) => model.byHash('hash-d1-k1')?.keyId, 'k1')
      .given(removed('d1', 'k1'))
      .then((model) => model.byHash('hash-d1-k1'), undefined)
      .then(keyIds('d1'), ['k2']);
  });

  it("a deleted device's keys go, also those of the same batch; other devices' stay", () => {
    spec
      .given(created('d1', 'k1', 1), created('d2', 'k1', 1))
      .then((model) => model.byHash('hash-d1-k1')?.keyId, 'k1')
      .given(created('d1', 'k2', 2), deleted('d1'))
      .then(keyIds('d1'), [])
      .then((model) => model.byHash('hash-d1-k1'), undefined)
      .then((model) => model.byHash('hash-d1-k2'), undefined)
      .then(keyIds('d2'), ['k1']);
  });

  it('a batch rolled back at its checkpoint and applied again leaves the same keys', () => {
    spec
      .given(created('d1', 'k1', 1))
      .then((model) => model.byHash('hash-d1-k1')?.keyId, 'k1')
      .givenRetried(removed('d1', 'k1'), created('d1', 'k2', 2))
      .then((model) => model.byHash('hash-d1-k1'), undefined)
      .then(keyIds('d1'), ['k2']);
  });
});
