/**
 * Real Baileys through a real loopback CONNECT proxy (the `proxy` package) to a local WhatsApp server
 * (crabline): the device's connection goes through the proxy named in its settings, with credentials;
 * a proxy that refuses the credentials or is down is a disconnect that names it, never a crash.
 */
import { rmSync } from 'node:fs';
import { type IncomingMessage, createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { createProxy } from 'proxy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BaileysEngine, createBaileysEngine } from '../../../src/engines/baileys/baileys-engine.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { proxySettingOf } from '../../../src/settings/proxy-url.js';
import { DEFAULT_SETTINGS, type DeviceSettings } from '../../../src/settings/settings-events.js';
import { tempDir } from '../../support/temp-dir.js';
import { type Crabline, seedLinkedCreds, startCrabline } from './support/crabline.js';
import { eventually, recordingEvents } from './support/recording-events.js';
import { Readable } from 'node:stream';
import { initAuthCreds } from 'baileys';
import { AuthRecords } from '../../../src/engines/baileys/auth/auth-records.js';
import { proxyDispatcherOf } from '../../../src/engines/baileys/proxy-agent.js';
import { fakeSocketFactory } from './support/fake-socket.js';

const CREDENTIALS = `Basic ${Buffer.from('alice:s3cret').toString('base64')}`;

describe('Baileys engine through a proxy', () => {
  const dir = tempDir('dmg-baileys-proxy-');
  let crabline: Crabline;
  let store: SqliteEventStore;
  const proxy = createProxy(createServer());
  const tunnels: string[] = [];
  const engines: BaileysEngine[] = [];
  let proxyPort: number;

  beforeAll(async () => {
    crabline = await startCrabline(dir);
    store = new SqliteEventStore(join(dir, 'events.sqlite'));
    proxy.authenticate = (req: IncomingMessage) => req.headers['proxy-authorization'] === CREDENTIALS;
    proxy.on('connect', (req: IncomingMessage) => tunnels.push(String(req.url)));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyPort = (proxy.address() as { port: number }).port;
  });

  afterAll(async () => {
    for (const engine of engines) await engine.close();
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
    await crabline?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const engineWith = (proxyUrl: string) => {
    const setting = proxySettingOf(proxyUrl, () => undefined);
    if (typeof setting === 'string') throw new Error(setting);
    const settings: DeviceSettings = { ...DEFAULT_SETTINGS, proxy: setting };
    const engine = createBaileysEngine({ store, socketUrl: crabline.socketUrl, logger: pino({ level: 'silent' }), verifyRecipients: false, deviceSettings: () => settings, connectTimeoutMs: 5_000 });
    engines.push(engine);
    return engine;
  };

  it('connects through the proxy: the proxy sees the tunnel to the server, and the device goes online', async () => {
    await seedLinkedCreds(store, 'via-proxy', crabline.selfJid);
    const events = recordingEvents();
    const connection = await engineWith(`http://alice:s3cret@127.0.0.1:${proxyPort}`).connect('via-proxy', events);
    await eventually(() => expect(events.onlines).toHaveLength(1));
    expect(tunnels).toContain(new URL(crabline.socketUrl).host);
    await connection.close();
  });

  it('a proxy that refuses the credentials: disconnected (transient), naming the proxy without the password', async () => {
    await seedLinkedCreds(store, 'wrong-password', crabline.selfJid);
    const events = recordingEvents();
    await engineWith(`http://alice:wrong@127.0.0.1:${proxyPort}`).connect('wrong-password', events);
    await eventually(() => expect(events.disconnects).toHaveLength(1));
    expect(events.disconnects[0]!.kind).toBe('transient');
    expect(events.disconnects[0]!.detail).toContain(`through the proxy http://***:***@127.0.0.1:${proxyPort}`);
    expect(events.disconnects[0]!.detail).not.toContain('wrong');
    expect(events.onlines).toEqual([]);
  });

  it('a proxy that is down: disconnected (transient), naming it', async () => {
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await seedLinkedCreds(store, 'proxy-down', crabline.selfJid);
    const events = recordingEvents();
    await engineWith(`socks5://alice:s3cret@127.0.0.1:${port}`).connect('proxy-down', events);
    await eventually(() => expect(events.disconnects).toHaveLength(1));
    expect(events.disconnects[0]).toEqual({ kind: 'transient', detail: expect.stringContaining(`through the proxy socks5://***:***@127.0.0.1:${port}`) });
    expect(events.disconnects[0]!.detail).not.toContain('s3cret');
  });

  it('media downloads go through the proxy too: the downloader gets its dispatcher, and fetch with it tunnels through', async () => {
    const media = createServer((_req, res) => res.end('media bytes'));
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    const mediaHost = `127.0.0.1:${(media.address() as { port: number }).port}`;
    try {
      const setting = proxySettingOf(`http://alice:s3cret@127.0.0.1:${proxyPort}`, () => undefined);
      if (typeof setting === 'string') throw new Error(setting);
      const dispatcher = proxyDispatcherOf(setting);
      const response = await fetch(`http://${mediaHost}/file`, { dispatcher } as unknown as RequestInit);
      expect(await response.text()).toBe('media bytes');
      expect(tunnels).toContain(mediaHost);
      await dispatcher.close();

      // The engine hands a device's downloader the dispatcher of its proxy.
      const sockets = fakeSocketFactory();
      const seen: unknown[] = [];
      const engine = createBaileysEngine({
        store,
        logger: pino({ level: 'silent' }),
        makeSocket: sockets.factory,
        keepAliveIntervalMs: 60_000,
        deviceSettings: () => ({ ...DEFAULT_SETTINGS, proxy: setting }),
        downloadMedia: async (_message, _socket, _logger, through) => {
          seen.push(through);
          return Readable.from([Buffer.from('x')]);
        },
      });
      engines.push(engine);
      await new AuthRecords(store, 'media-dev', undefined).write('creds', { ...initAuthCreds(), me: { id: '4915100000001:7@s.whatsapp.net', name: 'Shop' } });
      const events = recordingEvents();
      await engine.connect('media-dev', events);
      sockets.latest().open();
      await eventually(() => expect(events.onlines).toHaveLength(1));
      sockets.latest().emit('messages.upsert', {
        type: 'notify',
        messages: [{ key: { remoteJid: '4915112345678@s.whatsapp.net', fromMe: false, id: 'IMG1' }, message: { imageMessage: { mimetype: 'image/jpeg', fileLength: 1 } } }],
      });
      await eventually(() => expect(events.inbounds).toHaveLength(1));
      await events.inbounds[0]!.downloadMedia!();
      expect(seen).toHaveLength(1);
      expect(typeof (seen[0] as { dispatch?: unknown }).dispatch).toBe('function');
    } finally {
      media.closeAllConnections();
      await new Promise((resolve) => media.close(resolve));
    }
  });
});
