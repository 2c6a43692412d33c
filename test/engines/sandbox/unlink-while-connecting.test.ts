/**
 * The phone unlinks a sandbox device while its connection is starting (credentials read, not yet online): the
 * session ends logged out. It went online on the credentials it had read, for an account no longer linked.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeviceActor } from '../../../src/actors/device-actor.js';
import { SandboxEngine } from '../../../src/engines/sandbox/sandbox-engine.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { testActor } from '../../actors/support/test-actor.js';
import { eventually } from '../../support/eventually.js';
import { tempDir } from '../../support/temp-dir.js';

describe('a sandbox device unlinked by the phone while connecting', () => {
  let store: SqliteEventStore;
  let actor: DeviceActor;
  let sandbox: SandboxEngine;
  beforeEach(() => {
    store = new SqliteEventStore(join(tempDir('dmg-unlink-'), 'events.sqlite'));
    sandbox = new SandboxEngine(store, { deliveredDelayMs: 0, readDelayMs: 0 });
    actor = testActor(sandbox, store, { baseDelayMs: 10, maxDelayMs: 10, jitter: 0, maxAttempts: 3 });
  });
  afterEach(async () => {
    await actor.stop();
    await sandbox.close();
    await store.close();
  });

  it('ends logged out, never online', async () => {
    await actor.open();
    await eventually(() => (actor.state() === 'qr' ? true : undefined), 'qr');
    await sandbox.scan('dev', '4915100000777');
    await eventually(() => (actor.state() === 'online' ? true : undefined), 'online');
    await actor.close();

    await actor.open(); // connecting with the stored credentials
    expect(await sandbox.logout('dev')).toBe('unlinked');
    await eventually(() => (actor.state() === 'logged_out' ? true : undefined), 'logged out');
    expect(actor.sessionRecord().phone).toBeUndefined();
  });
});
