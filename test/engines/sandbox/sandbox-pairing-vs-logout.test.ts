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

/** While held, credential writes wait for `release()` before they reach the store (a busy disk). */
class HeldCredentialWrites extends DelegatingEventStore {
  private released: Promise<void> | undefined;
  private releaseWrites = () => undefined as void;
  private entered = () => undefined as void;
  /** Resolves once a held credential write is waiting. */
  writeWaiting: Promise<void> = Promise.resolve();

  hold(): void {
    this.released = new Promise((resolve) => (this.releaseWrites = resolve));
    this.writeWaiting = new Promise((resolve) => (this.entered = resolve));
  }

  release(): void {
    this.releaseWrites();
    this.released = undefined;
  }

  override async saveSnapshot(streamId: string, snapshot: Snapshot, options?: SnapshotWriteOptions): Promise<void> {
    if (streamId.startsWith('sandbox-credentials-') && this.released) {
      this.entered();
      await this.released;
    }
    return this.inner.saveSnapshot(streamId, snapshot, options);
  }
}

describe('a sandbox link whose credential write is overtaken by a logout', () => {
  let sqlite: SqliteEventStore;
  let store: HeldCredentialWrites;
  let sandbox: SandboxEngine;
  let actor: DeviceActor;

  beforeEach(() => {
    sqlite = new SqliteEventStore(join(tempDir('dmg-sandbox-race-'), 'events.sqlite'));
    store = new HeldCredentialWrites(sqlite);
    sandbox = new SandboxEngine(store, { deliveredDelayMs: 1, readDelayMs: 1 });
    actor = testActor(sandbox, store, { baseDelayMs: 1, maxDelayMs: 5, jitter: 0, maxAttempts: 3 });
  });
  afterEach(async () => {
    store.release();
    await actor.stop();
    await sandbox.close();
    await sqlite.close();
  });

  const credentials = async () => (await sqlite.loadSnapshot<unknown>('sandbox-credentials-dev'))?.state;

  /** Links while the write is held, closes with logout before it lands; answers what the link answered. */
  async function linkOvertakenByLogout(link: () => Promise<string>): Promise<string> {
    store.hold();
    const linking = link();
    await store.writeWaiting;
    expect(await actor.close({ logout: true })).toMatchObject({ state: 'logged_out', changed: true });
    store.release();
    return linking;
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
    store.hold();
    const scanning = sandbox.scan('dev', '4915112345678');
    await store.writeWaiting;
    store.release();
    expect(await scanning).toBe('paired');
    await eventually(() => actor.state() === 'online', 'online');
    expect(await credentials()).toMatchObject({ phone: '4915112345678' });
  });
});
