/**
 * The devices read model (src/devices/devices-read-model.ts), fed events directly: a device as created,
 * updated, given a new key and deleted; its session as it changes (state, phone, last error, reconnection
 * progress, since when); the pages of GET /devices, counts per state and key lookups. Its row cache is read
 * between batches, so each `then` also shows that a change reaches what was cached before it.
 */
import { describe, expect, it } from 'vitest';
import type { DeviceEvent } from '../../src/devices/device-events.js';
import { DevicesReadModel } from '../../src/devices/devices-read-model.js';
import type { SessionEvent, SessionStateChangedData } from '../../src/sessions/session-events.js';
import { readModelSpecification } from '../support/read-model-specification.js';

type Event = DeviceEvent | SessionEvent;

const spec = readModelSpecification<Event, DevicesReadModel>((db) => new DevicesReadModel(db));

const CREATED_AT = '2026-01-01T08:00:00.000Z';
const created = (deviceId: string, keyHash = `hash-${deviceId}`): Event => ({
  type: 'DeviceCreated',
  data: { deviceId, name: `Device ${deviceId}`, engine: 'sandbox', metadata: { shop: 1 }, keyHash, at: CREATED_AT },
});
const session = (
  deviceId: string,
  change: Omit<SessionStateChangedData, 'deviceId'>,
  createdAt?: string,
): Event & { createdAt?: Date } => ({
  type: 'SessionStateChanged',
  data: { deviceId, ...change },
  ...(createdAt === undefined ? {} : { createdAt: new Date(createdAt) }),
});
const deleted = (deviceId: string): Event => ({ type: 'DeviceDeleted', data: { deviceId } });

describe('devices read model', () => {
  it('answers a device as created, changed field by field, and with a new key', () => {
    spec
      .given(created('d1'))
      .then((devices) => devices.get('d1'), {
        id: 'd1',
        name: 'Device d1',
        engine: 'sandbox',
        metadata: { shop: 1 },
        createdAt: CREATED_AT,
        updatedAt: CREATED_AT,
        session: { state: 'closed' },
      })
      .then((devices) => devices.keyHashOf('d1'), 'hash-d1')
      .given({ type: 'DeviceUpdated', data: { deviceId: 'd1', name: 'Renamed', at: '2026-01-01T09:00:00.000Z' } })
      .then(
        (devices) => devices.get('d1'),
        expect.objectContaining({ name: 'Renamed', metadata: { shop: 1 }, updatedAt: '2026-01-01T09:00:00.000Z' }),
      )
      .given({
        type: 'DeviceUpdated',
        data: { deviceId: 'd1', metadata: { shop: 2, till: 'a' }, at: '2026-01-01T10:00:00.000Z' },
      })
      .then(
        (devices) => devices.get('d1'),
        expect.objectContaining({ name: 'Renamed', metadata: { shop: 2, till: 'a' }, createdAt: CREATED_AT }),
      )
      .given({
        type: 'DeviceKeyRotated',
        data: { deviceId: 'd1', keyHash: 'hash-new', at: '2026-01-01T11:00:00.000Z' },
      })
      .then((devices) => devices.keyHashOf('d1'), 'hash-new')
      .then((devices) => devices.isDeviceKeyHash('hash-new'), true)
      .then((devices) => devices.isDeviceKeyHash('hash-d1'), false)
      .then((devices) => devices.get('d1')?.updatedAt, '2026-01-01T11:00:00.000Z');
  });

  it('forgets a deleted device, its key with it; its id made again is a new device', () => {
    spec
      .given(created('d1'), created('d2'))
      .then((devices) => devices.get('d1')?.id, 'd1')
      .given(deleted('d1'))
      .then((devices) => devices.get('d1'), undefined)
      .then((devices) => devices.session('d1'), undefined)
      .then((devices) => devices.keyHashOf('d1'), undefined)
      .then((devices) => devices.isDeviceKeyHash('hash-d1'), false)
      .then((devices) => devices.get('d2')?.id, 'd2')
      .given(created('d1', 'hash-again'))
      .then((devices) => devices.keyHashOf('d1'), 'hash-again')
      .then((devices) => devices.session('d1')?.state, 'closed');
  });

  it('follows the session: its phone until logged out, its last error until online, its retries while reconnecting', () => {
    spec
      .given(created('d1'))
      .then((devices) => devices.session('d1'), { state: 'closed', since: CREATED_AT })
      .given(
        session('d1', { state: 'connecting', previousState: 'closed' }, '2026-01-02T00:00:00.000Z'),
        session(
          'd1',
          { state: 'online', previousState: 'connecting', phone: '4915100000001' },
          '2026-01-02T00:01:00.000Z',
        ),
      )
      .then((devices) => devices.session('d1'), {
        state: 'online',
        phone: '4915100000001',
        since: '2026-01-02T00:01:00.000Z',
      })
      .then((devices) => devices.sessionState('d1'), 'online')
      .given(
        session(
          'd1',
          {
            state: 'reconnecting',
            previousState: 'online',
            error: { code: 'connection_lost', message: 'the connection dropped' },
            attempt: 1,
            nextRetryAt: '2026-01-02T00:02:05.000Z',
          },
          '2026-01-02T00:02:00.000Z',
        ),
      )
      // A failed try while reconnecting keeps `since` (when reconnecting began) and the error reported before.
      .given(
        session(
          'd1',
          { state: 'reconnecting', previousState: 'reconnecting', attempt: 2, nextRetryAt: '2026-01-02T00:02:15.000Z' },
          '2026-01-02T00:02:05.000Z',
        ),
      )
      .then((devices) => devices.session('d1'), {
        state: 'reconnecting',
        phone: '4915100000001',
        since: '2026-01-02T00:02:00.000Z',
        lastError: { code: 'connection_lost', message: 'the connection dropped' },
        attempt: 2,
        nextRetryAt: '2026-01-02T00:02:15.000Z',
      })
      .then((devices) => devices.get('d1')?.session, {
        state: 'reconnecting',
        phone: '4915100000001',
        lastError: { code: 'connection_lost', message: 'the connection dropped' },
        attempt: 2,
        nextRetryAt: '2026-01-02T00:02:15.000Z',
      })
      .given(
        session(
          'd1',
          { state: 'failed', previousState: 'reconnecting', error: { code: 'too_many_attempts', message: 'gave up' } },
          '2026-01-02T00:03:00.000Z',
        ),
      )
      .then((devices) => devices.session('d1'), {
        state: 'failed',
        phone: '4915100000001',
        since: '2026-01-02T00:03:00.000Z',
        lastError: { code: 'too_many_attempts', message: 'gave up' },
      })
      .given(session('d1', { state: 'online', previousState: 'connecting' }, '2026-01-02T00:04:00.000Z'))
      .then((devices) => devices.session('d1'), {
        state: 'online',
        phone: '4915100000001',
        since: '2026-01-02T00:04:00.000Z',
      })
      .given(
        session('d1', { state: 'failed', previousState: 'online', error: { code: 'engine_error', message: 'x' } }),
        session(
          'd1',
          { state: 'logged_out', previousState: 'failed', reason: 'logged_out' },
          '2026-01-02T00:05:00.000Z',
        ),
      )
      .then((devices) => devices.session('d1'), { state: 'logged_out', since: '2026-01-02T00:05:00.000Z' });
  });

  it("ignores the session of a device it does not list (deleted, or its stream's events before its creation)", () => {
    spec
      .given(session('d9', { state: 'connecting', previousState: 'closed' }), created('d1'), deleted('d1'))
      .given(session('d1', { state: 'connecting', previousState: 'closed' }))
      .then((devices) => devices.session('d9'), undefined)
      .then((devices) => devices.session('d1'), undefined)
      .then((devices) => devices.countByState(), []);
  });

  it('pages devices by id, optionally in one session state, and counts them per state', () => {
    spec
      .given(created('d3'), created('d1'), created('d4'), created('d2'))
      .given(
        session('d2', { state: 'connecting', previousState: 'closed' }),
        session('d4', { state: 'connecting', previousState: 'closed' }),
        session('d4', { state: 'online', previousState: 'connecting', phone: '4915100000004' }),
      )
      .then((devices) => pageIds(devices.list({ limit: 3 })), { ids: ['d1', 'd2', 'd3'], nextAfter: 'd3' })
      .then((devices) => pageIds(devices.list({ limit: 3, after: 'd3' })), { ids: ['d4'], nextAfter: null })
      .then((devices) => pageIds(devices.list({ limit: 1, state: 'closed' })), { ids: ['d1'], nextAfter: 'd1' })
      .then((devices) => pageIds(devices.list({ limit: 1, state: 'closed', after: 'd1' })), {
        ids: ['d3'],
        nextAfter: null,
      })
      .then(
        (devices) => devices.list({ limit: 5, state: 'online' }).items,
        [expect.objectContaining({ id: 'd4', session: { state: 'online', phone: '4915100000004' } })],
      )
      .then((devices) => byState(devices.countByState()), { closed: 2, connecting: 1, online: 1 });
  });
});

const pageIds = (page: { items: Array<{ id: string }>; nextAfter: string | null }) => ({
  ids: page.items.map((item) => item.id),
  nextAfter: page.nextAfter,
});
const byState = (counts: Array<{ state: string; count: number }>) =>
  Object.fromEntries(counts.map(({ state, count }) => [state, count]));
