/**
 * The hub's flushes (src/stream/event-stream-hub.ts): an event after a quiet spell leaves at once, events
 * that come faster wait for the next flush and leave together, in order, in one corked write per client.
 * Driven on a real SQLite store; the flush interval is long enough that nothing here depends on timing.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { openEventStoreDbStore } from '../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import { startEsdbTestServer } from '../support/esdb-test-server.js';
import { EventStreamHub } from '../../src/stream/event-stream-hub.js';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { deviceStream } from '../../src/devices/device-events.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp-dir.js';

/** A sink that records each system-call-sized write: a lone write, or what left between cork and uncork. */
class RecordingSink extends PassThrough {
  readonly writes: string[] = [];
  private corkedChunks: string[] | undefined;

  override cork(): void {
    this.corkedChunks = [];
  }

  override uncork(): void {
    if (this.corkedChunks) this.writes.push(this.corkedChunks.join(''));
    this.corkedChunks = undefined;
  }

  override write(chunk: string | Uint8Array): boolean {
    const text = Buffer.from(chunk).toString();
    if (this.corkedChunks) this.corkedChunks.push(text);
    else this.writes.push(text);
    return true;
  }

  /** The message bodies in each write, in order. */
  bodies(): string[][] {
    return this.writes.map((write) => [...write.matchAll(/"body":"([^"]*)"/g)].map((m) => m[1]));
  }
}

describe('event stream hub flushes', () => {
  let store: SqliteEventStore | undefined;
  let hub: EventStreamHub | undefined;

  afterEach(async () => {
    await hub?.stop();
    await store?.close();
  });

  const receive = (deviceId: string, body: string) =>
    store!.append(inboxStream(deviceId), [
      {
        id: randomUUID(),
        type: 'MessageReceived',
        data: {
          deviceId,
          from: '4915122223333',
          type: 'text',
          body,
          timestamp: 1_700_000_000,
          waMessageId: `3EB0${randomUUID().replaceAll('-', '').slice(0, 18).toUpperCase()}`,
        },
      },
    ]);

  it('sends an event after a quiet spell at once and events that come faster together, in order, one write per client', async () => {
    store = new SqliteEventStore(join(tempDir('dmg-hub-'), 'events.sqlite'));
    hub = new EventStreamHub(store, {
      heartbeatMs: 3_600_000,
      maxBufferBytes: 1024 * 1024,
      flushMs: 3_600_000,
      log: pino({ level: 'silent' }),
    });
    hub.start(0);
    const admin = new RecordingSink();
    const device = new RecordingSink();
    const other = new RecordingSink();
    hub.open(admin, {});
    hub.open(device, { deviceId: 'hub-a' });
    hub.open(other, { deviceId: 'hub-b' });

    await receive('hub-a', 'first');
    await eventually(() => expect(admin.bodies()).toEqual([['first']]));
    expect(device.bodies()).toEqual([['first']]);

    // The next flush is an hour away: these wait, each dispatched on its own.
    for (const body of ['second', 'third', 'fourth']) {
      const appended = await receive('hub-a', body);
      await eventually(() => expect(hub!.stats().position).toBe(appended.position));
    }
    expect(admin.writes).toHaveLength(1);
    expect(device.writes).toHaveLength(1);

    // Stopping flushes what waits before it closes the clients.
    await hub.stop();
    hub = undefined;
    expect(admin.bodies()).toEqual([['first'], ['second', 'third', 'fourth']]);
    expect(device.bodies()).toEqual([['first'], ['second', 'third', 'fourth']]);
    expect(other.writes).toEqual([]);
    expect(admin.destroyed && device.destroyed && other.destroyed).toBe(true);
  });

  it("counts what waits for a client's next flush with what its socket holds, and resets the one too far behind", async () => {
    store = new SqliteEventStore(join(tempDir('dmg-hub-'), 'events.sqlite'));
    hub = new EventStreamHub(store, {
      heartbeatMs: 3_600_000,
      maxBufferBytes: 4096,
      flushMs: 3_600_000,
      log: pino({ level: 'silent' }),
    });
    hub.start(0);
    /** Holds `unsent` bytes it has not sent yet, as a socket whose reader is slow; records how it was closed. */
    class HoldingSink extends RecordingSink {
      resets = 0;
      constructor(unsent: number) {
        super();
        Object.defineProperty(this, 'writableLength', { get: () => unsent });
      }
      resetAndDestroy(): void {
        this.resets += 1;
        this.destroy();
      }
    }
    const behind = new HoldingSink(1024); // under the limit by itself
    const keepingUp = new HoldingSink(0);
    hub.open(behind, {});
    hub.open(keepingUp, {});
    await receive('hub-a', 'first');
    await eventually(() => expect(keepingUp.bodies()).toEqual([['first']]));
    // 6 KiB queued by the hub in one flush: with the 1 KiB its socket holds, past the 4 KiB allowance.
    for (const n of [1, 2, 3]) await receive('hub-a', `${n}${'x'.repeat(2048)}`);
    await eventually(() => expect(hub!.stats().position).toBeGreaterThan(1));
    await hub.stop();
    hub = undefined;
    expect(behind.resets).toBe(1);
    expect(behind.bodies()).toEqual([['first']]);
    // One that took all it was sent is not cut for a burst, however large.
    expect(keepingUp.resets).toBe(0);
    expect(keepingUp.bodies()).toHaveLength(2);
  });

  it('sends each event at once when the flush interval is 0 and the machine keeps up', async () => {
    store = new SqliteEventStore(join(tempDir('dmg-hub-'), 'events.sqlite'));
    hub = new EventStreamHub(store, {
      heartbeatMs: 3_600_000,
      maxBufferBytes: 1024 * 1024,
      flushMs: 0,
      log: pino({ level: 'silent' }),
    });
    hub.start(0);
    const admin = new RecordingSink();
    hub.open(admin, {});
    for (const body of ['one', 'two', 'three']) {
      await receive('hub-a', body);
      await eventually(() => expect(admin.bodies().flat().at(-1)).toBe(body));
    }
    expect(admin.bodies().flat()).toEqual(['one', 'two', 'three']);
  });
});

describe('event stream hub and device keys', () => {
  let store: SqliteEventStore | undefined;
  let hub: EventStreamHub | undefined;

  afterEach(async () => {
    await hub?.stop();
    await store?.close();
  });

  const start = (flushMs: number) => {
    store = new SqliteEventStore(join(tempDir('dmg-hub-keys-'), 'events.sqlite'));
    hub = new EventStreamHub(store, {
      heartbeatMs: 3_600_000,
      maxBufferBytes: 1024 * 1024,
      flushMs,
      log: pino({ level: 'silent' }),
    });
    hub.start(0);
  };
  const receive = (deviceId: string, body: string) =>
    store!.append(inboxStream(deviceId), [
      {
        id: randomUUID(),
        type: 'MessageReceived',
        data: {
          deviceId,
          from: '4915122223333',
          type: 'text',
          body,
          timestamp: 1_700_000_000,
          waMessageId: `3EB0${randomUUID().replaceAll('-', '').slice(0, 18).toUpperCase()}`,
        },
      },
    ]);
  const rotate = (deviceId: string, keyHash: string) =>
    store!.append(deviceStream(deviceId), [
      { id: randomUUID(), type: 'DeviceKeyRotated', data: { deviceId, keyHash, at: new Date().toISOString() } },
    ]);
  const passed = async (appended: { position: number }) =>
    eventually(() => expect(hub!.stats().position).toBe(appended.position));

  it('ends a device-key client at the rotation of its key: what came before leaves, nothing after; admin clients stay', async () => {
    // The next flush is an hour away after the first: the rotation and the event after it wait in the same queue.
    start(3_600_000);
    const admin = new RecordingSink();
    const withKey = new RecordingSink();
    const adminOnDevice = new RecordingSink();
    hub!.open(admin, {});
    hub!.open(withKey, { deviceId: 'hub-k', deviceKeyHash: 'hash-1' });
    hub!.open(adminOnDevice, { deviceId: 'hub-k' });
    await receive('hub-k', 'first');
    await eventually(() => expect(withKey.bodies()).toEqual([['first']]));
    await passed(await receive('hub-k', 'second'));
    await rotate('hub-k', 'hash-2');
    await passed(await receive('hub-k', 'after the rotation'));

    expect(withKey.bodies()).toEqual([['first'], ['second']]);
    expect(withKey.destroyed).toBe(true);
    expect(adminOnDevice.destroyed || admin.destroyed).toBe(false);
    await hub!.stop();
    hub = undefined;
    expect(withKey.bodies().flat()).not.toContain('after the rotation');
    expect(adminOnDevice.bodies().flat()).toEqual(['first', 'second', 'after the rotation']);
  });

  it('ends a device-key client at the deletion of its device', async () => {
    start(0);
    const withKey = new RecordingSink();
    hub!.open(withKey, { deviceId: 'hub-d', deviceKeyHash: 'hash-1' });
    await store!.append(deviceStream('hub-d'), [
      { id: randomUUID(), type: 'DeviceDeleted', data: { deviceId: 'hub-d' } },
    ]);
    await eventually(() => expect(withKey.destroyed).toBe(true));
  });

  it('lets a client catch up past the rotations that led to its key, and ends one opened with a key the hub saw rotated out', async () => {
    start(0);
    await rotate('hub-c', 'hash-0');
    await receive('hub-c', 'a');
    await rotate('hub-c', 'hash-1');
    await passed(await receive('hub-c', 'b'));

    const current = new RecordingSink();
    hub!.open(current, { deviceId: 'hub-c', deviceKeyHash: 'hash-1' }, 0);
    await eventually(() => expect(current.bodies().flat()).toEqual(['a', 'b']));
    expect(current.destroyed).toBe(false);

    // Authenticated by a read model behind the hub: the key was rotated out already.
    const stale = new RecordingSink();
    hub!.open(stale, { deviceId: 'hub-c', deviceKeyHash: 'hash-0' }, 0);
    expect(stale.destroyed).toBe(true);
    expect(stale.writes).toEqual([]);

    // Rotated again: the live client with hash-1 ends, one with the newest key reads all of it.
    await rotate('hub-c', 'hash-2');
    await passed(await receive('hub-c', 'c'));
    await eventually(() => expect(current.destroyed).toBe(true));
    expect(current.bodies().flat()).toEqual(['a', 'b']);
    const newest = new RecordingSink();
    hub!.open(newest, { deviceId: 'hub-c', deviceKeyHash: 'hash-2' }, 0);
    await eventually(() => expect(newest.bodies().flat()).toEqual(['a', 'b', 'c']));
    expect(newest.destroyed).toBe(false);
  });
});

describe('event stream hub resume points', () => {
  it('resumes only from 0 or the position of an event of the log: not past its end, nor inside an EventStoreDB record', async () => {
    const server = await startEsdbTestServer();
    const sqlite = new SqliteEventStore(join(tempDir('dmg-hub-'), 'events.sqlite'));
    const esdb = await openEventStoreDbStore(server.url);
    try {
      for (const store of [sqlite, esdb]) {
        const hub = new EventStreamHub(store, {
          heartbeatMs: 3_600_000,
          maxBufferBytes: 1024 * 1024,
          log: pino({ level: 'silent' }),
        });
        const { position } = await store.append(deviceStream('d1'), [
          { type: 'DeviceUpdated', data: { deviceId: 'd1', name: 'a' } },
        ]);
        await store.append(deviceStream('d1'), [{ type: 'DeviceUpdated', data: { deviceId: 'd1', name: 'b' } }]);
        expect(await hub.isEventPosition(0), store.kind).toBe(true);
        expect(await hub.isEventPosition(position), store.kind).toBe(true);
        expect(await hub.isEventPosition(position + 1_000_000), store.kind).toBe(false);
        // Byte offsets on EventStoreDB: one past an event's start lies inside its record, which the server refuses to read from.
        if (store.kind === 'eventstoredb') expect(await hub.isEventPosition(position + 1)).toBe(false);
      }
    } finally {
      await esdb.close();
      await sqlite.close();
      await server.stop();
    }
  });
});
