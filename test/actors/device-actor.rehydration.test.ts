import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DeviceActor } from '../../src/actors/device-actor.js';
import { createDeviceMachine } from '../../src/sessions/device-machine.js';
import { StoreMessageSink } from '../../src/actors/message-sink.js';
import { INITIAL_SESSION_RECORD, foldSessionEvents, loadSession } from '../../src/sessions/session-record.js';
import type { EventStore, ReadStreamOptions } from '../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import type { SessionStateChangedData } from '../../src/sessions/session-events.js';
import { tempDir } from '../support/temp-dir.js';
import { FakeEngine } from './support/fake-engine.js';
import { sessionStates } from '../support/sessions.js';
import { eventually } from '../support/eventually.js';
import { outboxReceipts } from '../support/outbox-receipts.js';

const SETTINGS = { baseDelayMs: 1, maxDelayMs: 5, jitter: 0, maxAttempts: 3 };
const ACCOUNT = { phone: '4915100000042', jid: '4915100000042@s.whatsapp.net' };

/** The store, with every readStream call written down. */
function spying(store: EventStore): {
  store: EventStore;
  reads: Array<{ streamId: string; options?: ReadStreamOptions }>;
} {
  const reads: Array<{ streamId: string; options?: ReadStreamOptions }> = [];
  const spy = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'readStream') {
        return (streamId: string, options?: ReadStreamOptions) => {
          reads.push({ streamId, options });
          return target.readStream(streamId, options);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: spy, reads };
}

describe('rehydrating a device from its snapshot and the events after it', () => {
  let store: SqliteEventStore;
  const actors: DeviceActor[] = [];

  const makeActor = (engine: FakeEngine, on: EventStore = store) => {
    const actor = new DeviceActor({
      deviceId: 'dev',
      resolveEngine: async () => engine,
      store: on,
      machine: createDeviceMachine(SETTINGS),
      sink: new StoreMessageSink(on, outboxReceipts(on)),
      log: pino({ level: 'silent' }),
      onTransition: () => undefined,
      snapshotEvery: 4,
    });
    actors.push(actor);
    return actor;
  };

  /** A real history: many connects and closes through the actor, ending in `end`. */
  async function buildHistory(end: 'closed' | 'online'): Promise<FakeEngine> {
    const engine = new FakeEngine();
    engine.onConnect = (connection) => connection.events.online(ACCOUNT);
    const actor = makeActor(engine);
    for (let i = 0; i < 5; i++) {
      await actor.open();
      await eventually(() => (actor.state() === 'online' ? true : undefined), 'online');
      if (i < 4 || end === 'closed') await actor.close();
    }
    await actor.stop();
    return engine;
  }

  beforeEach(() => {
    store = new SqliteEventStore(join(tempDir('dmg-rehydrate-'), 'events.sqlite'));
  });
  afterEach(async () => {
    for (const actor of actors.splice(0)) await actor.stop();
    await store.close();
  });

  it('loads a closed device without any side effect, reading only what follows the snapshot', async () => {
    const first = await buildHistory('closed');
    expect(first.connections).toHaveLength(5);
    const snapshot = await store.loadSnapshot<unknown>('session-dev');
    expect(snapshot?.revision).toBeGreaterThanOrEqual(11);

    const engine = new FakeEngine();
    const { store: spy, reads } = spying(store);
    const actor = makeActor(engine, spy);
    expect(await actor.load()).toBe('closed');
    expect(engine.connections).toEqual([]);
    expect(engine.forgotten).toEqual([]);
    expect(reads.filter((r) => r.streamId === 'session-dev')).toEqual([
      { streamId: 'session-dev', options: { fromRevision: snapshot!.revision + 1 } },
    ]);
    // The same as folding the whole history.
    const all = await store.readStream('session-dev');
    expect(actor.sessionRecord()).toEqual(foldSessionEvents(INITIAL_SESSION_RECORD, all));
    expect(actor.sessionRecord()).toEqual({ state: 'closed', phone: ACCOUNT.phone });
    expect(await store.readStream('session-dev')).toHaveLength(all.length); // nothing appended
  });

  it('a device recorded as running resumes with one new connection, not one per past connect', async () => {
    await buildHistory('online');
    const before = await sessionStates(store, 'dev');
    expect(before.filter((s) => s === 'connecting')).toHaveLength(5);

    const engine = new FakeEngine();
    engine.onConnect = (connection) => connection.events.online(ACCOUNT);
    const actor = makeActor(engine);
    expect(await actor.load()).toBe('connecting');
    await eventually(() => (actor.state() === 'online' ? true : undefined), 'online');
    expect(engine.connections).toHaveLength(1);
    expect((await sessionStates(store, 'dev')).slice(before.length)).toEqual(['connecting', 'online']);
  });

  it("takes the snapshot's word for everything up to its revision", async () => {
    const change = (data: Omit<SessionStateChangedData, 'deviceId'>) => ({
      type: 'SessionStateChanged',
      data: { deviceId: 'dev', ...data },
    });
    await store.append('session-dev', [
      change({ state: 'connecting', previousState: 'closed', reason: 'opened' }),
      change({ state: 'online', previousState: 'connecting', phone: '4915100000001', reason: 'connected' }),
      change({ state: 'closed', previousState: 'online', reason: 'closed_by_user' }),
    ]);
    // A snapshot at revision 1 that disagrees with events 0..1: only the snapshot can be the source.
    await store.saveSnapshot('session-dev', {
      revision: 1,
      state: { state: 'failed', phone: '4915100000999', lastError: { code: 'x', message: 'from the snapshot' } },
    });
    const loaded = await loadSession(store, 'dev');
    expect(loaded).toEqual({
      // The phone comes from the snapshot; closing clears the snapshot's stale error (the session rule).
      record: { state: 'closed', phone: '4915100000999' },
      revision: 2,
      snapshotRevision: 1,
    });
    const engine = new FakeEngine();
    const actor = makeActor(engine);
    expect(await actor.load()).toBe('closed');
    expect(engine.connections).toEqual([]);
  });

  it('an empty stream is a closed session at revision -1', async () => {
    expect(await loadSession(store, 'nobody')).toEqual({
      record: { state: 'closed' },
      revision: -1,
      snapshotRevision: -1,
    });
  });
});
