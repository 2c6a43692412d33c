/**
 * Baileys auth state (creds + Signal keys) in the SQLite event store through the snapshot API: round
 * trip, AES-256-GCM at rest, wrong or missing key, wipe.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { proto } from 'baileys';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthRecordError, AuthRecords } from '../../../../src/engines/baileys/auth/auth-records.js';
import { loadStoreAuthState, wipeStoreAuthState } from '../../../../src/engines/baileys/auth/store-auth-state.js';
import { ValueCipher } from '../../../../src/secrets/value-cipher.js';
import { SqliteEventStore } from '../../../../src/eventstore/sqlite/sqlite-event-store.js';
import { tempDir } from '../../../support/temp-dir.js';

const KEY = randomBytes(32);

describe('Baileys auth state in the event store', () => {
  let dir: string;
  let file: string;
  let store: SqliteEventStore;

  beforeEach(() => {
    dir = tempDir('dmg-baileys-auth-');
    file = join(dir, 'events.sqlite');
    store = new SqliteEventStore(file);
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every snapshot row as stored on disk, read with a separate connection. */
  function rawSnapshots(): Array<{ stream_id: string; state: string }> {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare('SELECT stream_id, state FROM snapshots ORDER BY stream_id').all() as Array<{
        stream_id: string;
        state: string;
      }>;
    } finally {
      db.close();
    }
  }

  /** Writes creds and a few keys of each shape Baileys stores, the way a connection does. */
  async function populate(records: AuthRecords) {
    const auth = await loadStoreAuthState(records);
    auth.state.creds.me = { id: '4915100000001:3@s.whatsapp.net', name: 'Shop' };
    await auth.saveCreds();
    const session = randomBytes(600);
    await auth.state.keys.set({
      'pre-key': {
        '1': { public: randomBytes(32), private: randomBytes(32) },
        '2': { public: randomBytes(32), private: randomBytes(32) },
      },
      session: { '4915112345678.0': session },
      'app-state-sync-key': { AAAAAQ: { keyData: randomBytes(32), timestamp: 1700000000 } },
      'lid-mapping': { '4915112345678': '123456789' },
    });
    await auth.flush();
    return { creds: auth.state.creds, session };
  }

  it('round-trips creds and Signal keys (Buffers included) through the store', async () => {
    const records = new AuthRecords(store, 'dev-1', undefined);
    const { creds, session } = await populate(records);

    const loaded = await loadStoreAuthState(new AuthRecords(store, 'dev-1', undefined));
    expect(loaded.state.creds.me).toEqual(creds.me);
    expect(Buffer.from(loaded.state.creds.noiseKey.private)).toEqual(Buffer.from(creds.noiseKey.private));
    expect(loaded.state.creds.registrationId).toBe(creds.registrationId);

    const sessions = await loaded.state.keys.get('session', ['4915112345678.0', 'unknown.0']);
    expect(Buffer.from(sessions['4915112345678.0'])).toEqual(session);
    expect(sessions).not.toHaveProperty('unknown.0');
    const appKeys = await loaded.state.keys.get('app-state-sync-key', ['AAAAAQ']);
    expect(appKeys.AAAAAQ).toBeInstanceOf(proto.Message.AppStateSyncKeyData);
    expect(await loaded.state.keys.get('lid-mapping', ['4915112345678'])).toEqual({ '4915112345678': '123456789' });
  });

  it('keeps auth records out of the event log that projections read', async () => {
    await populate(new AuthRecords(store, 'dev-1', undefined));
    expect(await store.readAll()).toEqual([]);
  });

  it('a key set to null is erased and leaves the index', async () => {
    const records = new AuthRecords(store, 'dev-1', undefined);
    await populate(records);
    const auth = await loadStoreAuthState(records);
    await auth.state.keys.set({ 'pre-key': { '1': null } });
    await auth.flush();
    expect(await auth.state.keys.get('pre-key', ['1', '2'])).toEqual({ '2': expect.anything() });
    expect((await records.read<{ keys: Record<string, Record<string, string>> }>('index'))?.keys['pre-key']).toEqual({
      '2': 'c',
    });
  });

  it('encrypts every record at rest with AES-256-GCM when a key is set', async () => {
    const { creds, session } = await populate(new AuthRecords(store, 'dev-1', new ValueCipher(KEY)));
    const rows = rawSnapshots();
    expect(rows).toHaveLength(2 + 5); // creds, index and five keys
    expect(rows.map((r) => r.stream_id)).toEqual(
      expect.arrayContaining(['baileys-auth-dev-1/creds', 'baileys-auth-dev-1/index']),
    );
    // Key ids hold contacts' numbers: their records sit under keyed digests of their names.
    for (const id of rows.map((r) => r.stream_id).filter((s) => !s.endsWith('/creds') && !s.endsWith('/index'))) {
      expect(id).toMatch(/^baileys-auth-dev-1\/blind\/[A-Za-z0-9_-]{43}$/);
    }
    expect(rows.map((r) => r.stream_id).join('\n')).not.toContain('4915112345678');
    for (const row of rows) {
      const state = JSON.parse(row.state) as { sealed?: { alg: string; iv: string; tag: string; data: string } };
      expect(state.sealed?.alg).toBe('aes-256-gcm');
      expect(Buffer.from(state.sealed!.iv, 'base64')).toHaveLength(12);
      expect(Buffer.from(state.sealed!.tag, 'base64')).toHaveLength(16);
    }
    const everything = rows.map((r) => r.state).join('\n');
    // Nothing readable: not the account, not a key in any encoding BufferJSON would use.
    expect(everything).not.toContain('4915100000001');
    expect(everything).not.toContain('4915112345678');
    expect(everything).not.toContain(Buffer.from(creds.noiseKey.private).toString('base64'));
    expect(everything).not.toContain(session.toString('base64'));

    const loaded = await loadStoreAuthState(new AuthRecords(store, 'dev-1', new ValueCipher(KEY)));
    expect(loaded.state.creds.me?.id).toBe('4915100000001:3@s.whatsapp.net');
    expect(Buffer.from((await loaded.state.keys.get('session', ['4915112345678.0']))['4915112345678.0'])).toEqual(
      session,
    );
  });

  it('seals each value with a fresh IV: the same value twice gives different ciphertexts', async () => {
    const records = new AuthRecords(store, 'dev-1', new ValueCipher(KEY));
    await records.write('creds', { a: 1 });
    const first = rawSnapshots()[0].state;
    await records.write('creds', { a: 1 });
    expect(rawSnapshots()[0].state).not.toBe(first);
  });

  it('a wrong key fails clearly instead of yielding garbage', async () => {
    await populate(new AuthRecords(store, 'dev-1', new ValueCipher(KEY)));
    const error = await loadStoreAuthState(new AuthRecords(store, 'dev-1', new ValueCipher(randomBytes(32)))).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AuthRecordError);
    expect((error as Error).message).toMatch(
      /baileys-auth-dev-1\/(creds|index): cannot be decrypted: authentication failed \(wrong ENCRYPTION_KEY/,
    );
  });

  it('encrypted records without a key configured fail clearly', async () => {
    await populate(new AuthRecords(store, 'dev-1', new ValueCipher(KEY)));
    await expect(loadStoreAuthState(new AuthRecords(store, 'dev-1', undefined))).rejects.toThrow(
      /is encrypted but ENCRYPTION_KEY is not set/,
    );
  });

  it('a sealed record moved under another name (another device) does not open', async () => {
    const cipher = new ValueCipher(KEY);
    await new AuthRecords(store, 'dev-1', cipher).write('creds', { secret: 1 });
    const [row] = rawSnapshots();
    await store.saveSnapshot('baileys-auth-dev-2/creds', { revision: 0, state: JSON.parse(row.state) });
    await expect(new AuthRecords(store, 'dev-2', cipher).read('creds')).rejects.toThrow(/cannot be decrypted/);
  });

  it('plaintext written before ENCRYPTION_KEY was set stays readable and is sealed on its next write', async () => {
    await new AuthRecords(store, 'dev-1', undefined).write('creds', { v: 'plain' });
    const encrypted = new AuthRecords(store, 'dev-1', new ValueCipher(KEY));
    expect(await encrypted.read('creds')).toEqual({ v: 'plain' });
    await encrypted.write('creds', { v: 'sealed now' });
    expect(rawSnapshots()[0].state).not.toContain('sealed now');
    expect(await encrypted.read('creds')).toEqual({ v: 'sealed now' });
  });

  it('keys stored in clear before ENCRYPTION_KEY was set stay readable and move to sealed, blinded records when rewritten', async () => {
    const { session } = await populate(new AuthRecords(store, 'dev-1', undefined));
    const encrypted = await loadStoreAuthState(new AuthRecords(store, 'dev-1', new ValueCipher(KEY)));
    expect(Buffer.from((await encrypted.state.keys.get('session', ['4915112345678.0']))['4915112345678.0'])).toEqual(
      session,
    );

    const newer = randomBytes(600);
    await encrypted.state.keys.set({ session: { '4915112345678.0': newer } });
    await encrypted.flush();
    expect(
      rawSnapshots().find((r) => r.stream_id === 'baileys-auth-dev-1/key/session/4915112345678.0'),
    ).toBeUndefined();
    const reloaded = await loadStoreAuthState(new AuthRecords(store, 'dev-1', new ValueCipher(KEY)));
    expect(Buffer.from((await reloaded.state.keys.get('session', ['4915112345678.0']))['4915112345678.0'])).toEqual(
      newer,
    );
  });

  it('wipes creds and every key, leaving no record behind', async () => {
    const records = new AuthRecords(store, 'dev-1', new ValueCipher(KEY));
    await populate(records);
    await new AuthRecords(store, 'dev-2', new ValueCipher(KEY)).write('creds', { other: 'device' });
    await wipeStoreAuthState(records);

    expect(rawSnapshots().filter((r) => r.stream_id.startsWith('baileys-auth-dev-1/'))).toEqual([]);
    expect(await records.read('creds')).toBeUndefined();
    const fresh = await loadStoreAuthState(records);
    expect(fresh.state.creds.me).toBeUndefined(); // next connect pairs anew
    expect(await fresh.state.keys.get('session', ['4915112345678.0'])).toEqual({});
    expect(await new AuthRecords(store, 'dev-2', new ValueCipher(KEY)).read('creds')).toEqual({ other: 'device' });
  });

  it('after stopWrites nothing more is stored (a closing socket cannot resurrect wiped credentials)', async () => {
    const records = new AuthRecords(store, 'dev-1', undefined);
    const auth = await loadStoreAuthState(records);
    auth.stopWrites();
    auth.state.creds.me = { id: 'late@s.whatsapp.net' };
    await auth.saveCreds();
    await auth.state.keys.set({ session: { late: Buffer.from('x') } });
    await auth.flush();
    expect(rawSnapshots()).toEqual([]);
  });
});
