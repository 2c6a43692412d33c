/**
 * `lastError` says why the session failed or, while reconnecting, why the last try failed. Logged out is
 * neither: an error from before the logout must not describe it, in the actor, in the stream's record, or in
 * the devices read model (they share the session rule of src/sessions/session-record.ts).
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeviceActor } from '../../src/actors/device-actor.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { loadSession } from '../../src/sessions/session-record.js';
import { FakeEngine } from '../actors/support/fake-engine.js';
import { testActor } from '../actors/support/test-actor.js';
import { eventually } from '../support/eventually.js';
import { startTestGateway } from '../support/gateway.js';
import { bringOnline, createSandboxDevice, waitForState } from '../support/sessions.js';
import { tempDir } from '../support/temp-dir.js';

const ACCOUNT = { phone: '4915100000042', jid: '4915100000042@s.whatsapp.net' };

describe('lastError once logged out', () => {
  let store: SqliteEventStore;
  let engine: FakeEngine;
  let actor: DeviceActor;

  beforeEach(() => {
    store = new SqliteEventStore(join(tempDir('dmg-last-error-'), 'events.sqlite'));
    engine = new FakeEngine();
    engine.onConnect = (connection, index) => (index === 0 ? connection.events.online(ACCOUNT) : undefined);
    // Slow retries: the session stays reconnecting until the test moves it on.
    actor = testActor(engine, store, { baseDelayMs: 60_000, maxDelayMs: 60_000, jitter: 0, maxAttempts: 3 });
  });
  afterEach(async () => {
    await actor.stop();
    await store.close();
  });

  it('the phone unlinking a reconnecting session clears the error of the lost connection', async () => {
    await actor.open();
    await eventually(() => actor.state() === 'online', 'online');
    engine.last.events.disconnected('transient', 'ECONNRESET');
    await eventually(() => actor.sessionRecord().lastError?.code === 'connection_reset', 'reconnecting with an error');
    engine.last.events.disconnected('logged_out', 'unlinked on the phone');
    await eventually(() => actor.state() === 'logged_out', 'logged_out');
    expect(actor.sessionRecord()).toEqual({ state: 'logged_out' });
    expect((await loadSession(store, 'dev')).record).toEqual({ state: 'logged_out' });
  });

  it('closing a failed session with logout clears the error it failed with', async () => {
    await actor.open();
    await eventually(() => actor.state() === 'online', 'online');
    engine.last.events.disconnected('connection_replaced', 'another client connected');
    await eventually(() => actor.state() === 'failed', 'failed');
    expect(actor.sessionRecord().lastError?.code).toBe('connection_replaced');
    await actor.close({ logout: true });
    expect(actor.sessionRecord()).toEqual({ state: 'logged_out' });
    expect((await loadSession(store, 'dev')).record).toEqual({ state: 'logged_out' });
  });

  it('GET /session/state of a device logged out while reconnecting carries no lastError', async () => {
    // Slow retries: the device stays reconnecting after the drop.
    const gateway = await startTestGateway({ SESSION_RECONNECT_BASE_DELAY_MS: '30000' });
    try {
      const { api } = gateway;
      const device = await createSandboxDevice(api, 'last-error');
      await bringOnline(api, device, '4915100001111');
      expect((await api('POST', `/sandbox/devices/${device.id}/disconnect`, { admin: true })).status).toBeLessThan(300);
      expect((await waitForState(api, device, 'reconnecting')).lastError).toBeDefined();
      await api('POST', `/devices/${device.id}/session/close`, { deviceKey: device.key, json: { logout: true } });
      const state = await waitForState(api, device, 'logged_out');
      expect(state.lastError).toBeUndefined();
    } finally {
      await gateway.close();
    }
  });
});
