/**
 * A phone links a sandbox device (QR scan or pairing code) while its credential write is slow, and the
 * session is closed with logout before that write lands: the logout's wipe must win, so the next open
 * shows a code again instead of logging in with credentials the user asked to forget.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeviceActor } from '../../../src/actors/device-actor.js';
import { DelegatingEventStore } from '../../../src/eventstore/delegating-store.js';
import type { Snapshot, SnapshotWriteOptions } from '../../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { SandboxEngine } from '../../../src/engines/sandbox/sandbox-engine.js';
import { testActor } from '../../actors/support/test-actor.js';
import { eventually } from '../../support/eventually.js';
import { tempDir } from '../../support/temp-dir.js';

/** Credential writes take `delayMs` before they reach the store (a busy disk). */
class SlowCredentialWrites extends DelegatingEventStore {
  delayMs = 0;

  override async saveSnapshot(streamId: string, snapshot: Snapshot, options?: SnapshotWriteOptions): Promise<void> {
    if (streamId.startsWith('sandbox-credentials-')) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    return this.inner.saveSnapshot(streamId, snapshot, options);
  }
}

describe('a sandbox link whose credential write is overtaken by a logout', () => {
  let sqlite: SqliteEventStore;
  let store: SlowCredentialWrites;
  let sandbox: SandboxEngine;
  let actor: DeviceActor;

  beforeEach(() => {
    sqlite = new SqliteEventStore(join(tempDir('dmg-sandbox-race-'), 'events.sqlite'));
    store = new SlowCredentialWrites(sqlite);
    sandbox = new SandboxEngine(store, { deliveredDelayMs: 1, readDelayMs: 1 });
    actor = testActor(sandbox, store, { baseDelayMs: 1, maxDelayMs: 5, jitter: 0, maxAttempts: 3 });
  });
  afterEach(async () => {
    await actor.stop();
    await sandbox.close();
    await sqlite.close();
  });

  const credentials = async () => (await sqlite.loadSnapshot<unknown>('sandbox-credentials-dev'))?.state;

  /** Links while the write is slow, closes with logout meanwhile; answers what the link answered. */
  async function linkOvertakenByLogout(link: () => Promise<string>): Promise<string> {
    store.delayMs = 100;
    const linking = link();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await actor.close({ logout: true })).toMatchObject({ state: 'logged_out', changed: true });
    const outcome = await linking;
    store.delayMs = 0;
    return outcome;
  }

  async function expectForgotten(): Promise<void> {
    expect(await credentials()).toBeUndefined();
    await actor.open();
    await eventually(() => actor.state() === 'qr', 'a code on the next open');
    expect(actor.sessionRecord().phone).toBeUndefined();
  }

  it('a QR scan fails and leaves no credentials', async () => {
    await actor.open();
    await eventually(() => actor.state() === 'qr', 'a code');
    expect(await linkOvertakenByLogout(() => sandbox.scan('dev', '4915112345678'))).toBe('no_qr');
    await expectForgotten();
  });

  it('a pairing code entered fails and leaves no credentials', async () => {
    const { pairing } = await actor.pair('4915112345678');
    expect(await linkOvertakenByLogout(() => sandbox.enterPairingCode('dev', pairing.code))).toBe('no_code');
    await expectForgotten();
  });

  it('a scan that lands first links as before', async () => {
    await actor.open();
    await eventually(() => actor.state() === 'qr', 'a code');
    store.delayMs = 20;
    expect(await sandbox.scan('dev', '4915112345678')).toBe('paired');
    await eventually(() => actor.state() === 'online', 'online');
    expect(await credentials()).toMatchObject({ phone: '4915112345678' });
  });
});
