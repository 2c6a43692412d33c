/**
 * Upcasting on read: events written in an older schema reach the code in the current one, through every
 * way of reading (a stream, $all, a subscription), and new events are stamped with the current version.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withCurrentSchemas } from '../../src/event-schemas.js';
import type { EventStore } from '../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { SCHEMA_VERSION_KEY, Upcasters } from '../../src/eventstore/upcasting.js';
import { tempDir } from '../support/gateway.js';

describe('upcasting', () => {
  let raw: SqliteEventStore;
  let store: EventStore;
  beforeEach(() => {
    raw = new SqliteEventStore(join(tempDir('dmg-upcast-'), 'events.sqlite'));
    store = withCurrentSchemas(raw);
  });
  afterEach(async () => {
    await store.close();
  });

  const v1Created = {
    type: 'DeviceCreated',
    data: { deviceId: 'old', name: 'Old', engine: 'sandbox', metadata: {}, keyHash: 'h' },
  };

  it('gives a version-1 DeviceCreated the time it was stored as `at`, on every read path', async () => {
    await raw.append('device-old', [v1Created]);
    const [stored] = await raw.readStream('device-old');
    const expected = { ...v1Created.data, at: stored.createdAt.toISOString() };
    expect((await store.readStream('device-old'))[0].data).toEqual(expected);
    expect((await store.readAll())[0].data).toEqual(expected);
    const subscription = store.subscribe();
    for await (const batch of subscription) {
      expect(batch[0].data).toEqual(expected);
      break;
    }
    await subscription.close();
  });

  it('stamps new events with their current version and leaves them as written', async () => {
    const current = { ...v1Created, data: { ...v1Created.data, deviceId: 'new', at: '2026-01-02T03:04:05.000Z' } };
    await store.append('device-new', [current]);
    const [written] = await raw.readStream('device-new');
    expect(written.metadata).toEqual({ [SCHEMA_VERSION_KEY]: 2 });
    expect((await store.readStream('device-new'))[0].data).toEqual(current.data);
  });

  it('hands onConflict the events another writer appended in their current schema, and stamps what it decides (issue 14)', async () => {
    await raw.append('device-old', [v1Created]);
    const [stored] = await raw.readStream('device-old');
    const seen: unknown[] = [];
    const renamed = { type: 'DeviceUpdated', data: { deviceId: 'old', name: 'Renamed' } };
    await store.append('device-old', [renamed], {
      expectedRevision: 'no_stream',
      onConflict: (newer) => {
        seen.push(...newer.map((event) => event.data));
        return [{ ...v1Created, data: { ...v1Created.data, at: '2026-01-02T03:04:05.000Z' } }];
      },
    });
    expect(seen).toEqual([{ ...v1Created.data, at: stored.createdAt.toISOString() }]);
    expect((await raw.readStream('device-old'))[1].metadata).toEqual({ [SCHEMA_VERSION_KEY]: 2 });
  });

  it('leaves types without versions alone', async () => {
    await store.append('inbox-x', [{ type: 'MessageReceived', data: { deviceId: 'x' } }]);
    expect((await raw.readStream('inbox-x'))[0].metadata).toEqual({});
  });

  it('refuses a chain with a missing step', () => {
    expect(() => new Upcasters([{ type: 'T', fromVersion: 2, upcast: (d) => d }])).toThrow(
      'no upcaster of T from version 1',
    );
    const chain = new Upcasters([
      { type: 'T', fromVersion: 1, upcast: (d) => ({ ...(d as object), b: 1 }) },
      { type: 'T', fromVersion: 2, upcast: (d) => ({ ...(d as object), c: 2 }) },
    ]);
    const event = {
      id: 'i',
      streamId: 's',
      revision: 0,
      position: 1,
      type: 'T',
      data: { a: 0 },
      metadata: { [SCHEMA_VERSION_KEY]: 2 },
      createdAt: new Date(),
    };
    expect(chain.upcast(event).data).toEqual({ a: 0, c: 2 });
    expect(chain.currentVersion('T')).toBe(3);
  });
});
