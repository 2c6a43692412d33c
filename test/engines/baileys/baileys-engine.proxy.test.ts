/**
 * Real Baileys through a real loopback CONNECT proxy (the `proxy` package) to a local WhatsApp server
 * (crabline): the device's connection goes through the proxy named in its settings, with credentials;
 * a proxy that refuses the credentials or is down is a disconnect that names it, never a crash. The
 * proxy's address passes the outbound guard when it is dialled (a name resolving to loopback included), and
 * its own words never reach the disconnect's detail.
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
import { recordingEvents } from './support/recording-events.js';
import { eventually } from '../../support/eventually.js';
import { Readable } from 'node:stream';
import { initAuthCreds } from 'baileys';
import { AuthRecords } from '../../../src/engines/baileys/auth/auth-records.js';
import { proxyDispatcherOf } from '../../../src/engines/baileys/proxy-agent.js';
import { fakeSocketFactory } from './support/fake-socket.js';
import { isDestinationRefused } from '../../../src/net/outbound-guard.js';

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

  // The proxies here listen on loopback: allowed as with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true unless a test says otherwise.
  const engineWith = (proxyUrl: string, { allowPrivateNetworks = true } = {}) => {
    const setting = proxySettingOf(proxyUrl, () => undefined);
    if (typeof setting === 'string') throw new Error(setting);
    const settings: DeviceSettings = { ...DEFAULT_SETTINGS, proxy: setting };
    const engine = createBaileysEngine({
      store,
      socketUrl: crabline.socketUrl,
      logger: pino({ level: 'silent' }),
      verifyRecipients: false,
      deviceSettings: () => settings,
      connectTimeoutMs: 5_000,
      allowPrivateNetworks,
    });
    engines.push(engine);
    return engine;
  };

  it('connects through the proxy: the proxy sees the tunnel to the server, and the device goes online', async () => {
    await seedLinkedCreds(store, 'via-proxy', crabline.selfJid);
    const events = recordingEvents();
    const connection = await engineWith(`http://alice:s3cret@127.0.0.1:${proxyPort}`).connect('via-proxy', events);
    await eventually(() => events.onlines.length === 1);
    expect(tunnels).toContain(new URL(crabline.socketUrl).host);
    await connection.close();
  });

  it('a proxy that refuses the credentials: disconnected (transient), naming the proxy without the password', async () => {
    await seedLinkedCreds(store, 'wrong-password', crabline.selfJid);
    const events = recordingEvents();
    await engineWith(`http://alice:wrong@127.0.0.1:${proxyPort}`).connect('wrong-password', events);
    await eventually(() => events.disconnects.length === 1);
    expect(events.disconnects[0].kind).toBe('transient');
    expect(events.disconnects[0].detail).toContain(`through the proxy http://***:***@127.0.0.1:${proxyPort}`);
    expect(events.disconnects[0].detail).not.toContain('wrong');
    expect(events.disconnects[0].detail).toContain('the proxy refused the tunnel (HTTP 407)');
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
    await eventually(() => events.disconnects.length === 1);
    expect(events.disconnects[0]).toEqual({
      kind: 'transient',
      detail: expect.stringContaining(`through the proxy socks5://***:***@127.0.0.1:${port}`),
    });
    expect(events.disconnects[0].detail).not.toContain('s3cret');
  });

  it('a proxy name that resolves to a private address is refused where it is dialled: nothing reaches it, the device or its media', async () => {
    const reached: string[] = [];
    const listener = createNetServer((socket) => {
      reached.push('connection');
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as { port: number }).port;
    const guarded = { allowPrivateNetworks: false };
    try {
      for (const scheme of ['http', 'https', 'socks5']) {
        // `localhost` stands for any such name (an /etc/hosts entry, *.nip.io): the URL alone cannot tell where it points.
        const proxyUrl = `${scheme}://alice:s3cret@localhost:${port}`;
        const deviceId = `name-to-loopback-${scheme}`;
        await seedLinkedCreds(store, deviceId, crabline.selfJid);
        const events = recordingEvents();
        await engineWith(proxyUrl, guarded).connect(deviceId, events);
        await eventually(() => events.disconnects.length === 1);
        expect(events.disconnects[0]).toEqual({
          kind: 'transient',
          detail: expect.stringContaining(`through the proxy ${scheme}://***:***@localhost:${port}`),
        });
        expect(events.disconnects[0].detail).toContain(
          'destination refused: localhost resolves to a non-public address',
        );
        expect(events.onlines).toEqual([]);

        const setting = proxySettingOf(proxyUrl, () => undefined);
        if (typeof setting === 'string') throw new Error(setting);
        const dispatcher = proxyDispatcherOf(setting, guarded);
        const failure = await fetch('http://media.example/file', { dispatcher } as unknown as RequestInit).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(isDestinationRefused(failure), scheme).toBe(true);
        await dispatcher.close();
      }
      // An IP literal is never looked up: it is judged before anything is dialled.
      await seedLinkedCreds(store, 'literal-loopback', crabline.selfJid);
      const refused = await engineWith(`http://127.0.0.1:${port}`, guarded)
        .connect('literal-loopback', recordingEvents())
        .catch((error: unknown) => error);
      expect(isDestinationRefused(refused)).toBe(true);
      expect((refused as Error).message).toBe(
        `destination refused: 127.0.0.1 is a non-public address (the proxy http://127.0.0.1:${port})`,
      );
      expect(reached).toEqual([]);
    } finally {
      await new Promise((resolve) => listener.close(resolve));
    }
  });

  it('private networks allowed (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true): a proxy name resolving to loopback is dialled', async () => {
    await seedLinkedCreds(store, 'via-localhost', crabline.selfJid);
    const events = recordingEvents();
    const connection = await engineWith(`http://alice:s3cret@localhost:${proxyPort}`, {
      allowPrivateNetworks: true,
    }).connect('via-localhost', events);
    await eventually(() => events.onlines.length === 1);
    await connection.close();

    // The SOCKS agent and both media dispatchers dial it too: a proxy that turns every tunnel down (reaching it is the point).
    let reached = 0;
    const listener = createNetServer((socket) =>
      socket.once('data', (hello) => {
        reached++;
        socket.end(hello[0] === 5 ? Buffer.from([5, 0xff]) : 'HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n');
      }),
    );
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as { port: number }).port;
    try {
      await seedLinkedCreds(store, 'socks-via-localhost', crabline.selfJid);
      const socksEvents = recordingEvents();
      await engineWith(`socks5://localhost:${port}`, { allowPrivateNetworks: true }).connect(
        'socks-via-localhost',
        socksEvents,
      );
      await eventually(() => socksEvents.disconnects.length === 1);
      expect(socksEvents.disconnects[0].detail).not.toContain('destination refused');
      for (const scheme of ['http', 'socks5']) {
        const setting = proxySettingOf(`${scheme}://localhost:${port}`, () => undefined);
        if (typeof setting === 'string') throw new Error(setting);
        const dispatcher = proxyDispatcherOf(setting, { allowPrivateNetworks: true });
        const failure = await fetch('http://media.example/file', { dispatcher } as unknown as RequestInit).catch(
          (error: unknown) => error,
        );
        expect(isDestinationRefused(failure), scheme).toBe(false);
        await dispatcher.close();
      }
      expect(reached).toBeGreaterThanOrEqual(3);
    } finally {
      await new Promise((resolve) => listener.close(resolve));
    }
  });

  it("a proxy that refuses the tunnel: the detail gives its status code, never the proxy's own words", async () => {
    const answers = [
      'HTTP/1.1 403 Forbidden by billing-db.internal:5432\r\nX-Upstream: billing-db.internal\r\n\r\n',
      'HTTP/1.1 200 OK\r\nSSH-2.0-OpenSSH_9.6 billing-db.internal\r\n\r\n',
    ];
    for (const [index, answer] of answers.entries()) {
      const talkative = createNetServer((socket) => socket.once('data', () => socket.end(answer)));
      await new Promise<void>((resolve) => talkative.listen(0, '127.0.0.1', resolve));
      const port = (talkative.address() as { port: number }).port;
      try {
        const deviceId = `talkative-proxy-${index}`;
        await seedLinkedCreds(store, deviceId, crabline.selfJid);
        const events = recordingEvents();
        await engineWith(`http://127.0.0.1:${port}`).connect(deviceId, events);
        await eventually(() => events.disconnects.length === 1);
        const { detail } = events.disconnects[0];
        expect(detail).toContain(`through the proxy http://127.0.0.1:${port}`);
        expect(detail).toContain(
          index === 0
            ? 'the proxy refused the tunnel (HTTP 403)'
            : 'the proxy answered CONNECT with a malformed header',
        );
        expect(detail).not.toMatch(/billing|Forbidden|OpenSSH/);
      } finally {
        await new Promise((resolve) => talkative.close(resolve));
      }
    }
  });

  it('media downloads go through the proxy too: the downloader gets its dispatcher, and fetch with it tunnels through', async () => {
    const media = createServer((_req, res) => res.end('media bytes'));
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    const mediaHost = `127.0.0.1:${(media.address() as { port: number }).port}`;
    try {
      const setting = proxySettingOf(`http://alice:s3cret@127.0.0.1:${proxyPort}`, () => undefined);
      if (typeof setting === 'string') throw new Error(setting);
      const dispatcher = proxyDispatcherOf(setting, { allowPrivateNetworks: true });
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
        allowPrivateNetworks: true,
        deviceSettings: () => ({ ...DEFAULT_SETTINGS, proxy: setting }),
        downloadMedia: async (_message, _socket, _logger, through) => {
          seen.push(through);
          return Readable.from([Buffer.from('x')]);
        },
      });
      engines.push(engine);
      await new AuthRecords(store, 'media-dev', undefined).write('creds', {
        ...initAuthCreds(),
        me: { id: '4915100000001:7@s.whatsapp.net', name: 'Shop' },
      });
      const events = recordingEvents();
      await engine.connect('media-dev', events);
      sockets.latest().open();
      await eventually(() => events.onlines.length === 1);
      sockets.latest().emit('messages.upsert', {
        type: 'notify',
        messages: [
          {
            key: { remoteJid: '4915112345678@s.whatsapp.net', fromMe: false, id: 'IMG1' },
            message: { imageMessage: { mimetype: 'image/jpeg', fileLength: 1 } },
          },
        ],
      });
      await eventually(() => events.inbounds.length === 1);
      await events.inbounds[0].downloadMedia!();
      expect(seen).toHaveLength(1);
      expect(typeof (seen[0] as { dispatch?: unknown }).dispatch).toBe('function');
    } finally {
      media.closeAllConnections();
      await new Promise((resolve) => media.close(resolve));
    }
  });
});
