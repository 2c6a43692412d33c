/**
 * The QR code on show as the supervisor answers it (GET /session/qr): a lone process answers at once; with several
 * processes the device's owner waits a few seconds while the device is on its way to a code (taken over and not loaded
 * yet), and says the device is moving when it is still not shown (issue 30: a process asked while devices moved as
 * processes joined answered `409` "the session is qr"). Time comes from a stopped clock: a wait that is not wanted
 * would never end.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type QrOnShow, Supervisor, type SupervisorSettings } from '../../src/actors/supervisor.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { Engines } from '../../src/engines/engines.js';
import { SandboxEngine } from '../../src/engines/sandbox/sandbox-engine.js';
import { eventually } from '../support/eventually.js';
import { outboxReceipts } from '../support/outbox-receipts.js';
import { TestClock } from '../support/test-clock.js';
import { tempDir } from '../support/temp-dir.js';

describe('the QR code on show, asked of the supervisor', () => {
  let store: SqliteEventStore;
  let clock: TestClock;
  beforeEach(() => {
    store = new SqliteEventStore(`${tempDir()}/events.sqlite`);
    clock = new TestClock();
  });
  afterEach(async () => {
    await store.close();
  });

  const supervisorOf = (cluster?: SupervisorSettings['cluster']) => {
    const sandbox = new SandboxEngine(store, { deliveredDelayMs: 1, readDelayMs: 1 });
    return new Supervisor({
      store,
      engines: new Engines([sandbox], sandbox),
      devices: { list: () => ({ items: [], nextAfter: null }) },
      reconnect: { baseDelayMs: 1, maxDelayMs: 5, jitter: 0, maxAttempts: 3 },
      log: pino({ level: 'silent' }),
      receipts: outboxReceipts(store),
      clock,
      ...(cluster ? { cluster } : {}),
    });
  };
  /** Several processes, this one holding every lease (its actors are loaded by `adopt`, as the lease tick does). */
  const owner = () =>
    supervisorOf({
      storeFor: () => store,
      owns: () => true,
      forward: async () => {
        throw new Error('this process owns the device');
      },
    });

  /** A device whose session shows its code in `supervisor`. */
  async function showingQr(supervisor: Supervisor, deviceId: string): Promise<void> {
    await store.append(`device-${deviceId}`, [
      { type: 'DeviceCreated', data: { deviceId, name: deviceId, engine: 'sandbox', keyHash: 'x' } },
    ]);
    await supervisor.open(deviceId);
    await eventually(() => supervisor.state(deviceId) === 'qr', 'a code');
  }

  /** Moves the clock on in steps until `answer` settles. */
  async function settled(answer: Promise<QrOnShow>): Promise<QrOnShow> {
    let value: QrOnShow | undefined;
    void answer.then((v) => (value = v));
    await eventually(async () => {
      await clock.advance(50);
      return value;
    }, 'the answer');
    return value!;
  }

  it('a lone process answers at once: the code in state qr, the state otherwise', async () => {
    const supervisor = supervisorOf();
    expect(await supervisor.qr('nobody')).toEqual({});
    await showingQr(supervisor, 'lone');
    const { qr, state } = await supervisor.qr('lone');
    expect(state).toBe('qr');
    expect(qr?.code).toMatch(/^sandbox:/);
    await supervisor.close('lone');
    expect(await supervisor.qr('lone')).toEqual({ state: 'closed' });
  });

  it('the owner of a device being taken over waits for its code and answers it once the device is loaded', async () => {
    const supervisor = owner();
    await showingQr(supervisor, 'arriving');
    // Where a process that just took the lease stands before its actor loads: the lease held, no actor yet.
    await supervisor.release('arriving');
    expect(supervisor.handover('arriving')).toBe('arriving');
    let answered = false;
    const answer = supervisor.qr('arriving').finally(() => (answered = true));
    await clock.advance(4_000);
    expect(answered).toBe(false);
    await supervisor.adopt('arriving');
    const { qr, state, moving } = await settled(answer);
    expect({ state, moving }).toEqual({ state: 'qr', moving: undefined });
    expect(qr?.code).toMatch(/^sandbox:/);
  });

  it('a device still not loaded after five seconds is said to be moving, with no state to tell', async () => {
    const supervisor = owner();
    await showingQr(supervisor, 'stuck');
    await supervisor.release('stuck');
    let answered = false;
    const answer = supervisor.qr('stuck').finally(() => (answered = true));
    await clock.advance(4_900);
    expect(answered).toBe(false);
    expect(await settled(answer)).toEqual({ moving: true });
  });

  it('a device another process runs is asked of it, and its answer passed on', async () => {
    const asked: unknown[] = [];
    const supervisor = supervisorOf({
      storeFor: () => store,
      owns: () => false,
      forward: async (deviceId, command) => {
        asked.push({ deviceId, command });
        return { state: 'closed', changed: false, moving: true };
      },
    });
    expect(await supervisor.qr('elsewhere')).toEqual({ state: 'closed', moving: true });
    expect(asked).toEqual([{ deviceId: 'elsewhere', command: { type: 'qr' } }]);
  });
});
