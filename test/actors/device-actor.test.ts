import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeviceActor } from '../../src/actors/device-actor.js';
import type { SessionTransition } from '../../src/sessions/session-commands.js';
import type { ReconnectSettings } from '../../src/sessions/reconnect-policy.js';
import { EngineError } from '../../src/engines/engine.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { type SessionStateChangedData, sessionStream } from '../../src/sessions/session-events.js';
import { tempDir } from '../support/temp-dir.js';
import { FakeEngine } from './support/fake-engine.js';
import { testActor } from './support/test-actor.js';
import { sessionChanges, sessionStates } from '../support/sessions.js';
import { eventually } from '../support/eventually.js';

const SETTINGS: ReconnectSettings = { baseDelayMs: 1, maxDelayMs: 5, jitter: 0.2, maxAttempts: 3 };
const ACCOUNT = { phone: '4915100000042', jid: '4915100000042@s.whatsapp.net' };

describe('the device actor with a scripted engine', () => {
  let store: SqliteEventStore;
  let engine: FakeEngine;
  let transitions: SessionTransition[];
  let actor: DeviceActor;

  const makeActor = (deviceId = 'dev') =>
    testActor(engine, store, SETTINGS, { deviceId, onTransition: (t) => transitions.push(t) });
  const reach = (state: string) => eventually(() => (actor.state() === state ? true : undefined), `state ${state}`);
  const lastRecorded = async () => (await sessionChanges(store, 'dev')).at(-1)?.state;

  beforeEach(() => {
    store = new SqliteEventStore(join(tempDir('dmg-actor-'), 'events.sqlite'));
    engine = new FakeEngine();
    transitions = [];
    actor = makeActor();
  });
  afterEach(async () => {
    await actor.stop();
    await store.close();
  });

  async function online() {
    engine.onConnect = (connection) => connection.events.online(ACCOUNT);
    await actor.open();
    await reach('online');
  }

  it('records each transition before its side effect runs', async () => {
    const seen: Array<[string, string | undefined]> = [];
    engine.onSideEffect = async (what) => {
      seen.push([what, await lastRecorded()]);
    };
    await online();
    expect(engine.connections).toHaveLength(1);
    await actor.close();
    await actor.open();
    await reach('online');
    await actor.close({ logout: true });
    expect(seen).toEqual([
      ['close', 'closed'],
      ['logout', 'logged_out'],
      ['forget', 'logged_out'],
    ]);
    expect(transitions.map((t) => t.state)).toEqual([
      'connecting',
      'online',
      'closed',
      'connecting',
      'online',
      'logged_out',
    ]);
    expect(transitions.map((t) => t.revision)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('connection_replaced: failed with that reason, the connection ended', async () => {
    await online();
    engine.last.events.disconnected('connection_replaced', 'another client connected');
    await reach('failed');
    const last = (await sessionChanges(store, 'dev')).at(-1)!;
    expect(last).toMatchObject({
      state: 'failed',
      previousState: 'online',
      reason: 'connection_replaced',
      error: { code: 'connection_replaced', message: 'another client connected' },
    });
    expect(last.phone).toBe(ACCOUNT.phone);
    expect(engine.last.closed).toBe(true);
    expect(actor.liveConnection()).toBeUndefined();
    // A fresh open starts again; lastError stays until online.
    await actor.open();
    await reach('online');
    expect(actor.sessionRecord().lastError).toBeUndefined();
  });

  it('logged_out from the network: logged_out, credentials forgotten, phone gone', async () => {
    await online();
    let recordedBeforeForget: string | undefined;
    engine.onSideEffect = async (what) => {
      if (what === 'forget') recordedBeforeForget = await lastRecorded();
    };
    engine.last.events.disconnected('logged_out', 'unlinked on the phone');
    await reach('logged_out');
    await eventually(() => (engine.forgotten.length === 1 ? true : undefined), 'forget');
    expect(recordedBeforeForget).toBe('logged_out');
    const last = (await sessionChanges(store, 'dev')).at(-1)!;
    expect(last.phone).toBeUndefined();
    expect(actor.sessionRecord().phone).toBeUndefined();
  });

  it('transient losses retry with backoff and give up with too_many_attempts', async () => {
    await online();
    // Every further try fails at once.
    engine.onConnect = (connection) => connection.events.disconnected('transient', 'connection timed out');
    engine.last.events.disconnected('transient', 'keepalive lost');
    await reach('failed');
    expect(engine.connections).toHaveLength(1 + SETTINGS.maxAttempts);
    // Every failed try while reconnecting is recorded (same state), so the history shows the retries.
    expect(await sessionStates(store, 'dev')).toEqual([
      'connecting',
      'online',
      'reconnecting',
      'reconnecting',
      'reconnecting',
      'failed',
    ]);
    const failed = (await sessionChanges(store, 'dev')).at(-1)!;
    expect(failed.error?.code).toBe('too_many_attempts');
    expect(failed.reason).toBe('too_many_attempts');
    expect(failed.error?.message).toContain('connection timed out');
  });

  it('while reconnecting, the record says why the last try failed, which try it was and when the next one starts', async () => {
    const slow = testActor(
      engine,
      store,
      { baseDelayMs: 60_000, maxDelayMs: 600_000, jitter: 0, maxAttempts: 5 },
      { deviceId: 'slow', onTransition: (t) => transitions.push(t) },
    );
    try {
      engine.connectError = new Error('getaddrinfo ENOTFOUND web.whatsapp.com');
      const before = Date.now();
      await slow.open();
      const first = await eventually(
        () => (slow.sessionRecord().state === 'reconnecting' ? slow.sessionRecord() : undefined),
        'reconnecting',
      );
      expect(first.lastError?.code).toBe('dns_failure');
      expect(first.lastError?.message).toContain('ENOTFOUND');
      expect(first.attempt).toBe(1);
      expect(Date.parse(first.nextRetryAt!)).toBeGreaterThanOrEqual(before + 60_000);
      const changes = await sessionChanges(store, 'slow');
      expect(changes.at(-1)).toMatchObject({
        state: 'reconnecting',
        previousState: 'connecting',
        reason: 'connect_failed',
        attempt: 1,
        error: { code: 'dns_failure' },
      });
      // Closing clears the stale error and the retry.
      await slow.close();
      expect(slow.sessionRecord()).toEqual({ state: 'closed' });
    } finally {
      await slow.stop();
    }
  });

  it('each failed try while reconnecting is an event with its attempt and error', async () => {
    await online();
    engine.onConnect = (connection) =>
      connection.events.disconnected('transient', 'connect ECONNREFUSED 157.240.0.1:443');
    engine.last.events.disconnected('transient', 'keepalive lost');
    await reach('failed');
    const retries = (await sessionChanges(store, 'dev')).filter((change) => change.reason === 'attempt_failed');
    expect(retries.map((change) => change.attempt)).toEqual([2, 3]);
    for (const retry of retries) {
      expect(retry).toMatchObject({
        state: 'reconnecting',
        previousState: 'reconnecting',
        error: { code: 'connect_refused' },
      });
      expect(retry.nextRetryAt).toBeDefined();
    }
    expect(actor.sessionRecord().attempt).toBeUndefined();
  });

  it('a reconnect that succeeds resets the count', async () => {
    await online();
    engine.onConnect = (connection, index) =>
      index % 2 === 1 ? connection.events.disconnected('transient', 'flaky') : connection.events.online(ACCOUNT);
    for (let round = 0; round < SETTINGS.maxAttempts + 2; round++) {
      const before = engine.connections.length;
      engine.last.events.disconnected('transient', 'lost');
      await eventually(
        () => (engine.connections.length >= before + 2 && actor.state() === 'online' ? true : undefined),
        `round ${round}`,
      );
    }
    expect(actor.state()).toBe('online');
  });

  it('restart_required reconnects at once, without waiting', async () => {
    engine.onConnect = (connection, index) =>
      index === 0 ? connection.events.qr('code-1', new Date(Date.now() + 20_000)) : connection.events.online(ACCOUNT);
    await actor.open();
    await reach('qr');
    expect(actor.qr()).toMatchObject({ code: 'code-1' });
    engine.last.events.qr('code-2', new Date(Date.now() + 20_000));
    await eventually(() => (actor.qr()?.code === 'code-2' ? true : undefined), 'renewed code');
    engine.last.events.disconnected('restart_required', 'paired');
    await reach('online');
    expect(await sessionStates(store, 'dev')).toEqual(['connecting', 'qr', 'connecting', 'online']);
    expect(actor.account()).toEqual(ACCOUNT);
  });

  it('ignores callbacks of a connection it has left', async () => {
    await online();
    const old = engine.last;
    await actor.close();
    old.events.online(ACCOUNT);
    old.events.disconnected('logged_out', 'late');
    await actor.open(); // goes through the mailbox after the stale callbacks
    await reach('online');
    expect(await sessionStates(store, 'dev')).toEqual(['connecting', 'online', 'closed', 'connecting', 'online']);
    expect(engine.forgotten).toEqual([]);
  });

  it('a permanent connect failure fails the session with its code; a transient one retries', async () => {
    engine.connectError = new EngineError('credentials_unreadable', 'cannot decrypt the stored credentials', true);
    await actor.open();
    await reach('failed');
    expect(actor.sessionRecord().lastError).toEqual({
      code: 'credentials_unreadable',
      message: 'cannot decrypt the stored credentials',
    });

    engine.connectError = new Error('socket hang up');
    await actor.open();
    await reach('failed');
    expect((await sessionChanges(store, 'dev')).at(-1)!.error?.code).toBe('too_many_attempts');
  });

  it('commands answer whether they changed anything', async () => {
    const opened = await actor.open();
    expect(opened).toMatchObject({ state: 'connecting', changed: true });
    expect(opened.position).toBe((await store.readStream(sessionStream('dev'))).at(-1)!.position);
    expect(await actor.open()).toEqual({ state: 'connecting', changed: false });
    expect(await actor.close()).toMatchObject({ state: 'closed', changed: true });
    expect(await actor.close()).toEqual({ state: 'closed', changed: false });
    expect(await actor.reboot()).toMatchObject({ state: 'connecting', changed: true });
  });

  it('a second writer of the session stream is rejected, and the actor decides again on what it says', async () => {
    await actor.open();
    // Another process appends to this device's session (it should not; optimistic concurrency catches it).
    const intruder: SessionStateChangedData = {
      deviceId: 'dev',
      state: 'closed',
      previousState: 'connecting',
      reason: 'closed_by_user',
    };
    await store.append('session-dev', [{ type: 'SessionStateChanged', data: intruder }], { expectedRevision: 0 });
    // The actor's next decision meets the conflict, reloads (closed), and lets go of its connection.
    engine.last.events.online(ACCOUNT);
    await reach('closed');
    await eventually(() => (engine.connections[0].closed ? true : undefined), 'the connection to end');
    const result = await actor.open();
    expect(result).toMatchObject({ state: 'connecting', changed: true });
    expect(await sessionStates(store, 'dev')).toEqual(['connecting', 'closed', 'connecting']);
  });
});
