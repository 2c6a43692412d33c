/**
 * The blocklist read model (src/account/blocklist-read-model.ts), fed events directly: what each account event
 * does to a device's list, a refresh from the network replacing it, and a deleted device leaving nothing.
 */
import { describe, it } from 'vitest';
import { BlocklistReadModel } from '../../src/account/blocklist-read-model.js';
import type { AccountEvent } from '../../src/account/account-events.js';
import type { DeviceEvent } from '../../src/devices/device-events.js';
import { readModelSpecification } from '../support/read-model-specification.js';

type Event = AccountEvent | DeviceEvent;

const spec = readModelSpecification<Event, BlocklistReadModel>((db) => new BlocklistReadModel(db));
const blocked = (deviceId: string, number: string): Event => ({ type: 'ContactBlocked', data: { deviceId, number } });
const unblocked = (deviceId: string, number: string): Event => ({
  type: 'ContactUnblocked',
  data: { deviceId, number },
});
const refreshed = (deviceId: string, ...numbers: string[]): Event => ({
  type: 'BlocklistRefreshed',
  data: { deviceId, numbers },
});
const deleted = (deviceId: string): Event => ({ type: 'DeviceDeleted', data: { deviceId } });

describe('blocklist read model', () => {
  it('lists the numbers a device blocked, in order, each once, and not those it unblocked', () => {
    spec
      .given(blocked('d1', '4915100000003'), blocked('d1', '4915100000001'), blocked('d2', '4915100000009'))
      .given(blocked('d1', '4915100000002'), blocked('d1', '4915100000001'))
      .then((blocklist) => blocklist.list('d1'), ['4915100000001', '4915100000002', '4915100000003'])
      .given(unblocked('d1', '4915100000002'), unblocked('d1', '4915100000404'))
      .then((blocklist) => blocklist.list('d1'), ['4915100000001', '4915100000003'])
      .then((blocklist) => blocklist.list('d2'), ['4915100000009'])
      .then((blocklist) => blocklist.list('nobody'), []);
  });

  it("replaces a device's list with the one the network reports, and no other device's", () => {
    spec
      .given(blocked('d1', '4915100000001'), blocked('d1', '4915100000002'), blocked('d2', '4915100000001'))
      .given(refreshed('d1', '4915100000005', '4915100000002'))
      .then((blocklist) => blocklist.list('d1'), ['4915100000002', '4915100000005'])
      .then((blocklist) => blocklist.list('d2'), ['4915100000001'])
      .given(refreshed('d1'))
      .then((blocklist) => blocklist.list('d1'), []);
  });

  it("forgets a deleted device's list; a device made again under its id starts empty", () => {
    spec
      .given(blocked('d1', '4915100000001'), blocked('d2', '4915100000002'))
      .given(deleted('d1'))
      .then((blocklist) => blocklist.list('d1'), [])
      .then((blocklist) => blocklist.list('d2'), ['4915100000002'])
      .given(blocked('d1', '4915100000007'))
      .then((blocklist) => blocklist.list('d1'), ['4915100000007']);
  });

  it('ignores a profile change and the other device events', () => {
    spec
      .given(
        blocked('d1', '4915100000001'),
        { type: 'ProfileChanged', data: { deviceId: 'd1', name: 'Shop', about: 'open 9-5' } },
        { type: 'DeviceUpdated', data: { deviceId: 'd1', name: 'Renamed', at: '2026-01-01T00:00:00.000Z' } },
      )
      .then((blocklist) => blocklist.list('d1'), ['4915100000001']);
  });
});
