/**
 * Deleting a device closes its session with logout and wipes its credentials. A store that refuses that
 * one close (a transient error) must not leave the deleted device's credentials behind; with several
 * processes only the device's owner acts.
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Supervisor } from '../../src/actors/supervisor.js';
import { DelegatingEventStore } from '../../src/eventstore/delegating-store.js';
import {
  type AppendOptions,
  type AppendResult,
  type NewEvent,
  StoreUnavailableError,
} from '../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { Engines } from '../../src/engines/engines.js';
import { SandboxEngine } from '../../src/engines/sandbox/sandbox-engine.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp-dir.js';
import { outboxReceipts } from '../support/outbox-receipts.js';

/** Refuses the next `refuseSessionAppends` appends to session streams, as a busy database would. */
class HiccupStore extends DelegatingEventStore {
  refuseSessionAppends = 0;

  override async append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    if (streamId.startsWith('session-') && this.refuseSessionAppends > 0) {
      this.refuseSessionAppends -= 1;
      throw new StoreUnavailableError('append failed: database is locked');
    }
    return this.inner.append(streamId, events, options);
  }
}

describe("removing a deleted device's session", () => {
  let sqlite: SqliteEventStore;
  let store: HiccupStore;
  let sandbox: SandboxEngine;
  let supervisor: Supervisor;

  const makeSupervisor = (cluster?: { owns: (deviceId: string) => boolean }, engine = sandbox) =>
    new Supervisor({
      store,
      engines: new Engines([engine], engine),
      devices: { list: () => ({ items: [], nextAfter: null }) },
      reconnect: { baseDelayMs: 1, maxDelayMs: 5, jitter: 0, maxAttempts: 3 },
      log: pino({ level: 'silent' }),
      receipts: outboxReceipts(store),
      ...(cluster
        ? {
            cluster: {
              storeFor: () => store,
              owns: cluster.owns,
              forward: async () => {
                throw new Error('not forwarded in this test');
              },
            },
          }
        : {}),
    });
  const credentials = async (deviceId: string) =>
    (await sqlite.loadSnapshot<unknown>(`sandbox-credentials-${deviceId}`))?.state;

  /** A sandbox device linked to `phone` and online. */
  async function linkedDevice(deviceId: string, phone: string): Promise<void> {
    await store.append(`device-${deviceId}`, [
      {
        type: 'DeviceCreated',
        data: { deviceId, name: deviceId, engine: 'sandbox', keyHash: 'x', at: new Date().toISOString() },
      },
    ]);
    await supervisor.open(deviceId);
    await eventually(() => supervisor.state(deviceId) === 'qr', 'a code');
    expect(await sandbox.scan(deviceId, phone)).toBe('paired');
    await eventually(() => supervisor.state(deviceId) === 'online', 'online');
    expect(await credentials(deviceId)).toMatchObject({ phone });
  }

  beforeEach(() => {
    sqlite = new SqliteEventStore(join(tempDir('dmg-remove-'), 'events.sqlite'));
    store = new HiccupStore(sqlite);
    sandbox = new SandboxEngine(store, { deliveredDelayMs: 1, readDelayMs: 1 });
    supervisor = makeSupervisor();
  });
  afterEach(async () => {
    await supervisor.stopAll();
    await sqlite.close();
  });

  it('wipes the credentials although the store refused the close', async () => {
    await linkedDevice('dev', '4915112345678');
    store.refuseSessionAppends = 1;
    await supervisor.remove('dev');
    expect(store.refuseSessionAppends).toBe(0); // the close was refused indeed
    expect(supervisor.peek('dev')).toBeUndefined();
    expect(await credentials('dev')).toBeUndefined();
  });

  it('with several processes, one that does not own the device leaves it to the owner', async () => {
    await linkedDevice('dev', '4915112345678');
    // Another process: its own engine on the same store.
    const elsewhere = makeSupervisor(
      { owns: () => false },
      new SandboxEngine(store, { deliveredDelayMs: 1, readDelayMs: 1 }),
    );
    try {
      await elsewhere.remove('dev');
      expect(await credentials('dev')).toMatchObject({ phone: '4915112345678' });
      expect(supervisor.state('dev')).toBe('online');
    } finally {
      await elsewhere.stopAll();
    }
  });
});
