/**
 * The Baileys engine driven through a fake socket that follows Baileys' event contract, for the paths a
 * local server cannot exercise. `useFakeSocketEngine()` registers the per-test setup (a fresh store, a
 * socket factory, an engine) and answers the handle the tests use.
 */
import { join } from 'node:path';
import { initAuthCreds } from 'baileys';
import { pino } from 'pino';
import { afterEach, beforeEach } from 'vitest';
import { AuthRecords } from '../../../../src/engines/baileys/auth/auth-records.js';
import type { ValueCipher } from '../../../../src/secrets/value-cipher.js';
import {
  type BaileysEngine,
  type BaileysEngineOptions,
  createBaileysEngine,
} from '../../../../src/engines/baileys/baileys-engine.js';
import type { EngineConnection } from '../../../../src/engines/engine.js';
import { SqliteEventStore } from '../../../../src/eventstore/sqlite/sqlite-event-store.js';
import { tempDir } from '../../../support/temp-dir.js';
import { type FakeSocket, fakeSocketFactory } from './fake-socket.js';
import { type RecordingEvents, recordingEvents } from './recording-events.js';
import { eventually } from '../../../support/eventually.js';

export const ME = '4915100000001:7@s.whatsapp.net';
export const PEER = '4915112345678';
export const PEER_JID = `${PEER}@s.whatsapp.net`;

export interface FakeSocketEngine {
  dir: string;
  store: SqliteEventStore;
  sockets: ReturnType<typeof fakeSocketFactory>;
  /** The engine the test uses; replace it with makeEngine(...) for other options. */
  engine: BaileysEngine;
  /** Another engine on the same store and sockets; closed after the test. */
  makeEngine(options?: Partial<BaileysEngineOptions>): BaileysEngine;
  records(deviceId?: string, cipher?: ValueCipher): AuthRecords;
  /** Stored credentials of a linked account (ME). */
  linkedCreds(deviceId?: string): Promise<void>;
  /** A device with stored credentials, connected and online. */
  online(deviceId?: string): Promise<{ connection: EngineConnection; events: RecordingEvents; socket: FakeSocket }>;
}

export function useFakeSocketEngine(defaults: Partial<BaileysEngineOptions> = {}): FakeSocketEngine {
  let engines: BaileysEngine[] = [];
  const h = {} as FakeSocketEngine;

  beforeEach(() => {
    engines = [];
    h.dir = tempDir('dmg-baileys-fake-');
    h.store = new SqliteEventStore(join(h.dir, 'events.sqlite'));
    h.sockets = fakeSocketFactory();
    h.engine = h.makeEngine();
  });

  afterEach(async () => {
    for (const engine of engines) await engine.close();
    await h.store.close();
  });

  h.makeEngine = (options = {}) => {
    const engine = createBaileysEngine({
      store: h.store,
      logger: pino({ level: 'silent' }),
      makeSocket: h.sockets.factory,
      // Long enough that the watchdog stays out of tests that do not exercise it.
      keepAliveIntervalMs: 60_000,
      ...defaults,
      ...options,
    });
    engines.push(engine);
    return engine;
  };

  h.records = (deviceId = 'dev-1', cipher) => new AuthRecords(h.store, deviceId, cipher);

  h.linkedCreds = async (deviceId = 'dev-1') => {
    await h.records(deviceId).write('creds', { ...initAuthCreds(), me: { id: ME, name: 'Shop' } });
  };

  h.online = async (deviceId = 'dev-1') => {
    await h.linkedCreds(deviceId);
    const events = recordingEvents();
    const connection = await h.engine.connect(deviceId, events);
    const socket = h.sockets.latest();
    socket.open();
    await eventually(() => events.onlines.length === 1);
    return { connection, events, socket };
  };

  return h;
}
