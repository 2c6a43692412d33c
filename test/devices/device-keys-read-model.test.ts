/**
 * The scoped keys read model (src/devices/device-keys-read-model.ts) on a real SQLite file: it says which key
 * hashes apply() changed (the machine projector tells the workers, whose caches go), and it notes key uses in
 * memory, writing them together at the next flush (src/devices/key-usage.ts), never while authenticating.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DeviceKeysReadModel } from '../../src/devices/device-keys-read-model.js';
import type { StoredEvent } from '../../src/eventstore/event-store.js';
import { FLUSH_EVERY_MS, KEY_USE_RESOLUTION_MS } from '../../src/devices/key-usage.js';
import { tempDir } from '../support/temp-dir.js';
import { TestClock } from '../support/test-clock.js';

const AT = '2026-01-01T08:00:00.000Z';
let position = 0;
const event = (type: string, data: object): StoredEvent =>
  ({ type, data, position: ++position, createdAt: new Date(AT) }) as unknown as StoredEvent;
const created = (deviceId: string, keyHash: string) =>
  event('DeviceKeyCreated', { deviceId, keyId: `key_${keyHash}`, name: 'ci', scopes: ['read'], keyHash, at: AT });

describe('device keys read model', () => {
  let db: Database.Database | undefined;
  afterEach(() => db?.close());

  function open(clock = new TestClock()) {
    db = new Database(join(tempDir('dmg-device-keys-'), 'read-models.sqlite'));
    const keys = new DeviceKeysReadModel(db, clock);
    keys.setup(db);
    const changed: string[] = [];
    keys.onChanged = (keyHash) => changed.push(keyHash);
    return { keys, changed, db, clock };
  }

  it('says which key hashes it changed, also each key of a deleted device', () => {
    const { keys, changed } = open();
    keys.apply(created('d1', 'a'));
    keys.apply(created('d1', 'b'));
    keys.apply(created('d2', 'c'));
    expect(keys.byHash('a')?.deviceId).toBe('d1');
    keys.apply(event('DeviceKeyDeleted', { deviceId: 'd1', keyId: 'key_a', keyHash: 'a', at: AT }));
    keys.apply(event('DeviceDeleted', { deviceId: 'd2' }));
    expect(changed).toEqual(['a', 'b', 'c', 'a', 'c']);
    expect([keys.byHash('a'), keys.byHash('c')]).toEqual([undefined, undefined]);
  });

  it('drops a cached key when told another process deleted it', () => {
    const { keys, db } = open();
    keys.apply(created('d1', 'a'));
    expect(keys.byHash('a')).toBeDefined();
    // The projector's write, in a worker's view: the row goes, the cache holds it until forget().
    db.prepare('DELETE FROM device_keys WHERE key_hash = ?').run('a');
    expect(keys.byHash('a')).toBeDefined();
    keys.forget('a');
    expect(keys.byHash('a')).toBeUndefined();
  });

  it('notes uses in memory and writes them in one flush, shown meanwhile', async () => {
    const { keys, db, clock } = open();
    keys.apply(created('d1', 'a'));
    keys.apply(created('d1', 'b'));
    const now = clock.now();
    keys.noteUse('a', now);
    keys.noteUse('b', now + 1);
    const written = () => db.prepare('SELECT key_hash, last_used_at FROM key_usage ORDER BY key_hash').all();
    // Nothing written while authenticating; the listing shows the use already.
    expect(written()).toEqual([]);
    expect(keys.lastUsedAt('a')).toBe(new Date(now).toISOString());
    await clock.advance(FLUSH_EVERY_MS);
    expect(written()).toEqual([
      { key_hash: 'a', last_used_at: new Date(now).toISOString() },
      { key_hash: 'b', last_used_at: new Date(now + 1).toISOString() },
    ]);
    // Within the resolution a use is not noted again; after it, it is.
    keys.noteUse('a', now + 10);
    expect(keys.usage.unwritten('a')).toBeUndefined();
    keys.noteUse('a', now + KEY_USE_RESOLUTION_MS);
    expect(keys.list('d1')[0].lastUsedAt).toBe(new Date(now + KEY_USE_RESOLUTION_MS).toISOString());
  });

  it("sends a worker's uses to its sink (the projector) instead of writing them", () => {
    const { keys, db } = open();
    keys.apply(created('d1', 'a'));
    const sent: Array<Array<[string, number]>> = [];
    keys.usage.sink = (uses) => sent.push(uses);
    keys.noteUse('a', 5);
    keys.usage.stop();
    expect(sent).toEqual([[['a', 5]]]);
    expect(db.prepare('SELECT * FROM key_usage').all()).toEqual([]);
  });
});
