/**
 * The settings read model (src/settings/settings-read-model.ts) with ENCRYPTION_KEY: proxy credentials that
 * events recorded in clear (before the key was set) are kept sealed, opened for the engines only; and the
 * reset before a rebuild overwrites the old rows' bytes, so the file keeps no clear copy of them. First, what
 * it answers for each event, fed as the runner feeds it.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { DeviceEvent } from '../../src/devices/device-events.js';
import type { StoredEvent } from '../../src/eventstore/event-store.js';
import { SealedText } from '../../src/secrets/sealed-text.js';
import type { DeviceSettingsChangedData, SettingsEvent } from '../../src/settings/settings-events.js';
import { SettingsReadModel } from '../../src/settings/settings-read-model.js';
import { readModelSpecification } from '../support/read-model-specification.js';
import { tempDir } from '../support/temp-dir.js';

const changed = (position: number, deviceId: string, password: string): StoredEvent => ({
  id: `e${position}`,
  streamId: `settings-${deviceId}`,
  revision: 0,
  position,
  type: 'DeviceSettingsChanged',
  // As a gateway without ENCRYPTION_KEY (or before credentials were sealed) records it.
  data: {
    deviceId,
    proxy: { url: 'http://***:***@proxy.example:3128', credentials: { username: 'alice', password } },
  },
  metadata: {},
  createdAt: new Date(),
});

describe('settings read model', () => {
  it('keeps credentials recorded in clear sealed when a key is set, and opens them for the engines', () => {
    const db = new Database(':memory:');
    const key = randomBytes(32);
    const model = new SettingsReadModel(db, new SealedText(key));
    model.setup(db);
    model.apply(changed(1, 'd1', 'clear-password'));
    const row = db.prepare('SELECT settings FROM device_settings').pluck().get() as string;
    expect(row).not.toContain('clear-password');
    expect(JSON.parse(row).proxy).toEqual({
      url: 'http://***:***@proxy.example:3128',
      sealedCredentials: expect.stringMatching(/^sealed:v1:/),
    });
    expect(model.get('d1').proxy).toEqual({
      url: 'http://***:***@proxy.example:3128',
      credentials: { username: 'alice', password: 'clear-password' },
    });
    expect(model.recorded('d1').proxy).not.toHaveProperty('credentials');
    // Another key cannot open them; without one, they are not even looked at for the masked view.
    expect(() => new SettingsReadModel(db, new SealedText(randomBytes(32))).get('d1')).toThrow('ENCRYPTION_KEY');
    expect(new SettingsReadModel(db).recorded('d1').proxy?.url).toBe('http://***:***@proxy.example:3128');
    db.close();
  });

  it('overwrites the rows it resets: the clear credentials of the version before leave the file', () => {
    const path = join(tempDir(), 'read-models.sqlite');
    const passwords = Array.from({ length: 300 }, (_, i) => `clear-password-${i}-${randomBytes(4).toString('hex')}`);
    const before = new Database(path);
    const unkeyed = new SettingsReadModel(before);
    unkeyed.setup(before);
    before.transaction(() => passwords.forEach((password, i) => unkeyed.apply(changed(i + 1, `d${i}`, password))))();
    before.close();
    expect(readFileSync(path).includes(passwords[0])).toBe(true);

    const db = new Database(path);
    const keyed = new SettingsReadModel(db, new SealedText(randomBytes(32)));
    keyed.setup(db);
    keyed.reset(db);
    db.close();
    const bytes = readFileSync(path);
    expect(passwords.filter((password) => bytes.includes(password))).toEqual([]);
  });
});

describe('settings read model, fed events', () => {
  const spec = readModelSpecification<SettingsEvent | DeviceEvent, SettingsReadModel>(
    (db) => new SettingsReadModel(db),
  );
  const settingsChanged = (deviceId: string, change: Omit<DeviceSettingsChangedData, 'deviceId'>) =>
    ({ type: 'DeviceSettingsChanged', data: { deviceId, ...change } }) as const;
  const proxy = { url: 'socks5://***:***@proxy.example:1080', credentials: { username: 'u', password: 'p' } };

  it("answers the defaults for a device that changed nothing, and each change on top of the device's others", () => {
    spec
      .given(settingsChanged('d2', { rejectCalls: true }))
      .then((settings) => settings.get('d1'), {
        rejectCalls: false,
        rejectCallsMessage: null,
        proxy: null,
        historySync: 'recent',
      })
      .given(settingsChanged('d1', { rejectCalls: true, rejectCallsMessage: 'busy' }))
      .given(settingsChanged('d1', { proxy, historySync: 'recent' }))
      .then((settings) => settings.get('d1'), {
        rejectCalls: true,
        rejectCallsMessage: 'busy',
        proxy,
        historySync: 'recent',
      })
      .given(
        settingsChanged('d1', { rejectCallsMessage: null, proxy: null, historySync: 'recent' }),
        settingsChanged('d1', { rejectCalls: false }),
      )
      .then((settings) => settings.recorded('d1'), {
        rejectCalls: false,
        rejectCallsMessage: null,
        proxy: null,
        historySync: 'recent',
      })
      .then((settings) => settings.get('d2'), {
        rejectCalls: true,
        rejectCallsMessage: null,
        proxy: null,
        historySync: 'recent',
      });
  });

  it("forgets a deleted device's settings: its id made again starts from the defaults", () => {
    spec
      .given(
        settingsChanged('d1', { rejectCalls: true, proxy, historySync: 'recent' }),
        settingsChanged('d2', { rejectCalls: true }),
      )
      .given({ type: 'DeviceDeleted', data: { deviceId: 'd1' } })
      .then((settings) => settings.get('d1'), {
        rejectCalls: false,
        rejectCallsMessage: null,
        proxy: null,
        historySync: 'recent',
      })
      .then((settings) => settings.get('d2').rejectCalls, true)
      .given(settingsChanged('d1', { rejectCallsMessage: 'later' }))
      .then((settings) => settings.get('d1'), {
        rejectCalls: false,
        rejectCallsMessage: 'later',
        proxy: null,
        historySync: 'recent',
      });
  });
});
