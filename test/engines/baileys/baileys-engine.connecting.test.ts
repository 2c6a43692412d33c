/**
 * The Baileys engine through a fake socket (support/fake-socket-engine.ts). Connecting: the credentials
 * and settings handed to Baileys, QR pairing, unreadable or unavailable credentials.
 */
import { type AuthenticationCreds, initAuthCreds, proto } from 'baileys';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ValueCipher } from '../../../src/secrets/value-cipher.js';
import { createLazyBaileysEngine } from '../../../src/engines/baileys/index.js';
import { EngineError } from '../../../src/engines/engine.js';
import { StoreUnavailableError } from '../../../src/eventstore/event-store.js';
import type { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { ME, useFakeSocketEngine } from './support/fake-socket-engine.js';
import { recordingEvents } from './support/recording-events.js';
import { eventually } from '../../support/eventually.js';

const h = useFakeSocketEngine();

describe('Baileys engine (fake socket): connecting', () => {
  it('passes the stored credentials and the quiet settings to Baileys (no presence, no full history)', async () => {
    const { socket } = await h.online();
    const config = socket.config;
    expect(config.auth.creds.me?.id).toBe(ME);
    expect(config.version).toEqual(expect.arrayContaining([expect.any(Number)]));
    expect(config.version).toHaveLength(3);
    // The default historySync (`recent`): the recent history, not the full one (baileys-engine.history.test.ts).
    expect(config.shouldSyncHistoryMessage?.({ syncType: proto.Message.HistorySyncType.FULL })).toBe(false);
    expect(config.syncFullHistory).toBe(false);
    expect(config.markOnlineOnConnect).toBe(false);
    expect(config.keepAliveIntervalMs).toBe(60_000);
    expect(config.logger?.level).toBe('silent');
  });

  it('announces the WhatsApp Web version WA_WEB_VERSION names; latest is looked up, the pinned one when that fails', async () => {
    const pinned = (await h.online()).socket.config.version;
    const engineWith = (options: Parameters<typeof h.makeEngine>[0]) => h.makeEngine(options);
    await engineWith({ version: [2, 3000, 42] }).connect('dev-2', recordingEvents());
    expect(h.sockets.latest().config.version).toEqual([2, 3000, 42]);

    let lookups = 0;
    const latest = engineWith({ version: 'latest', latestVersion: async () => (lookups++, [2, 3000, 77]) });
    await latest.connect('dev-3', recordingEvents());
    expect(h.sockets.latest().config.version).toEqual([2, 3000, 77]);
    await latest.connect('dev-4', recordingEvents());
    expect(lookups).toBe(1); // kept for an hour

    await engineWith({
      version: 'latest',
      latestVersion: async () => {
        throw new Error('offline');
      },
    }).connect('dev-5', recordingEvents());
    expect(h.sockets.latest().config.version).toEqual(pinned);
  });

  it('reports online with the linked account', async () => {
    const { events } = await h.online();
    expect(events.onlines[0]).toEqual({ phone: '4915100000001', jid: '4915100000001@s.whatsapp.net', name: 'Shop' });
  });

  it('issues QR codes for a device without credentials, each with its expiry', async () => {
    const events = recordingEvents();
    await h.engine.connect('dev-1', events);
    const socket = h.sockets.latest();
    expect(socket.config.auth.creds.me).toBeUndefined();
    const before = Date.now();
    socket.showQr('2@first,abc');
    socket.showQr('2@second,def');
    expect(events.qrs.map((q) => q.code)).toEqual(['2@first,abc', '2@second,def']);
    expect(events.qrs[0].expiresAt.getTime()).toBeGreaterThanOrEqual(before + 20_000);
    expect(events.onlines).toEqual([]);
  });

  it('keeps the account linked by a scan: restart_required, then the next connect logs in without QR', async () => {
    const events = recordingEvents();
    await h.engine.connect('dev-1', events);
    const first = h.sockets.latest();
    first.showQr('2@ref');
    first.pair(ME, 'Shop');
    await eventually(() => events.disconnects.length > 0, 'the restart');
    expect(events.disconnects).toEqual([{ kind: 'restart_required', detail: expect.stringContaining('515') }]);

    // The pairing credentials land through the store's group commit; the next connect waits for them.
    await eventually(async () => (await h.records().read<AuthenticationCreds>('creds'))?.me?.id === ME, 'stored creds');

    const again = recordingEvents();
    await h.engine.connect('dev-1', again);
    const second = h.sockets.latest();
    expect(second).not.toBe(first);
    expect(second.config.auth.creds.me?.id).toBe(ME);
    expect(second.config.auth.creds.noiseKey.private).toEqual(first.config.auth.creds.noiseKey.private);
    second.open();
    await eventually(() => again.onlines.length === 1);
    expect(again.qrs).toEqual([]);
  });

  it('a reconnect right after the scan waits for the pairing credentials to be stored, even on a slow store', async () => {
    // Once the account is linked, its writes wait until the reconnect has started: the reconnect finds them pending.
    let writesHeld: Promise<void> = Promise.resolve();
    let releaseWrites = () => undefined as void;
    const slowStore = new Proxy(h.store, {
      get(target, property, receiver) {
        if (property === 'saveSnapshot') {
          return async (...args: Parameters<SqliteEventStore['saveSnapshot']>) => {
            await writesHeld;
            return target.saveSnapshot(...args);
          };
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const slow = h.makeEngine({ store: slowStore });
    const events = recordingEvents();
    let reconnected: Promise<unknown> | undefined;
    events.disconnected = (kind) => {
      // The actor reconnects at once on restart_required.
      if (kind === 'restart_required') {
        reconnected = slow.connect('dev-1', recordingEvents());
        releaseWrites();
      }
    };
    await slow.connect('dev-1', events);
    writesHeld = new Promise((resolve) => (releaseWrites = resolve));
    h.sockets.latest().pair(ME, 'Shop');
    // The reconnect was started by the restart_required report, and it connected with the pairing credentials.
    await eventually(() => reconnected instanceof Promise, 'the reconnect started');
    await reconnected;
    expect(slow.connectionCount).toBe(1);
    expect(h.sockets.sockets).toHaveLength(2);
    expect(h.sockets.latest().config.auth.creds.me?.id).toBe(ME);
    await slow.close();
  });

  it('a store that cannot be read makes connect fail transiently', async () => {
    const broken = new Proxy(h.store, {
      get(target, property, receiver) {
        if (property === 'loadSnapshot') return async () => Promise.reject(new StoreUnavailableError('store is away'));
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const other = h.makeEngine({ store: broken });
    await expect(other.connect('dev-1', recordingEvents())).rejects.toMatchObject({
      name: 'EngineError',
      code: 'engine_error',
      permanent: false,
    });
    await other.close();
  });

  it("the registry's lazy engine loads Baileys on first use and behaves the same", async () => {
    await h.linkedCreds('dev-lazy');
    const lazy = createLazyBaileysEngine({
      store: h.store,
      logger: pino({ level: 'silent' }),
      makeSocket: h.sockets.factory,
      keepAliveIntervalMs: 60_000,
    });
    expect(lazy.name).toBe('baileys');
    const events = recordingEvents();
    const connection = await lazy.connect('dev-lazy', events);
    h.sockets.latest().open();
    await eventually(() => events.onlines.length === 1);
    await connection.close();
    await lazy.forget('dev-lazy');
    expect(await h.records('dev-lazy').read('creds')).toBeUndefined();
    await lazy.close?.();
  });

  it('refuses to connect, permanently, when the stored credentials cannot be decrypted', async () => {
    await h.records('dev-1', new ValueCipher(Buffer.alloc(32, 1))).write('creds', initAuthCreds());
    const other = h.makeEngine({ encryptionKey: Buffer.alloc(32, 2) });
    const error = await other.connect('dev-1', recordingEvents()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect(error).toMatchObject({ code: 'credentials_unreadable', permanent: true });
    expect((error as Error).message).toMatch(/wrong ENCRYPTION_KEY/);
    await other.close();
  });
});
