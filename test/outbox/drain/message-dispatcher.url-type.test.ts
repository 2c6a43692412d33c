/**
 * The type a `url` media is sent with. The bytes decide; the server's Content-Type stands in only where
 * file-type cannot always tell (files, some audio). An image, video or sticker whose bytes are not one (an HTML
 * login page served as image/jpeg) fails `media_unavailable` / `wrong_type`, as base64 or an upload is 415.
 */
import { once } from 'node:events';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineConnection, OutgoingMessage } from '../../../src/engines/engine.js';
import { MediaFetcher } from '../../../src/media/media-fetcher.js';
import type { MediaKind } from '../../../src/media/media-kinds.js';
import { MediaStore } from '../../../src/media/media-store.js';
import { OutboundGuard } from '../../../src/net/outbound-guard.js';
import { MessageDispatcher } from '../../../src/outbox/drain/message-dispatcher.js';
import type { PendingMessage } from '../../../src/outbox/stream/outbox-state.js';
import { tempDir } from '../../support/temp-dir.js';

const HTML = '<!doctype html><html><head><title>Sign in</title></head><body>Your session expired</body></html>';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

describe('the type of url media', () => {
  let server: Server;
  let base: string;
  const guard = new OutboundGuard({ allowPrivateNetworks: true });
  beforeAll(async () => {
    // /<served type, url-encoded>/<html|png>: those bytes with that Content-Type.
    server = createServer((req, res) => {
      const [, type, body] = (req.url ?? '').split('/');
      res.writeHead(200, { 'content-type': decodeURIComponent(type) }).end(body === 'png' ? PNG : HTML);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    guard.destroy();
    server.close();
  });

  /** Sends one `url` media message: the type it went with, or the failure's reason. */
  async function sendUrl(
    kind: MediaKind,
    served: string,
    body: 'html' | 'png',
  ): Promise<{ mimetype?: string; reason?: string }> {
    const store = new MediaStore(tempDir('dmg-url-type-'));
    await store.init();
    const settings = { maxBytes: 1024 * 1024, fileMaxBytes: 1024 * 1024, fetchTimeoutMs: 5_000 };
    const dispatcher = new MessageDispatcher(store, new MediaFetcher(guard, 5_000), settings);
    const sent: OutgoingMessage[] = [];
    const connection = { send: async (m: OutgoingMessage) => void sent.push(m) } as unknown as EngineConnection;
    const message = {
      outboxId: 'o1',
      waMessageId: '3EB0000000000000000001',
      to: '4915112345678',
      seq: 1,
      createdAt: new Date().toISOString(),
      status: 'sending',
      attempts: 1,
      failures: 0,
      retryAt: 0,
      confirmed: false,
      content: { kind, media: { source: 'url', url: `${base}/${encodeURIComponent(served)}/${body}` } },
    } as unknown as PendingMessage;
    try {
      await dispatcher.send(connection, 'shop', message);
    } catch (error) {
      return { reason: (error as { reason?: string }).reason };
    }
    return { mimetype: (sent[0].content as { media: { mimetype: string } }).media.mimetype };
  }

  it.each(['image', 'video', 'sticker'] as const)(
    'fails a %s whose bytes are not recognised, whatever the server claims',
    async (kind) => {
      const claim = { image: 'image/jpeg', video: 'video/mp4', sticker: 'image/webp' }[kind];
      expect(await sendUrl(kind, claim, 'html')).toEqual({ reason: 'wrong_type' });
    },
  );

  it('takes the bytes over the server', async () => {
    expect(await sendUrl('image', 'text/html', 'png')).toEqual({ mimetype: 'image/png' });
  });

  it("takes the server's type for a file or audio whose bytes are not recognised, when it fits the kind", async () => {
    expect(await sendUrl('file', 'text/csv', 'html')).toEqual({ mimetype: 'text/csv' });
    expect(await sendUrl('file', 'application/octet-stream', 'html')).toEqual({ mimetype: 'application/octet-stream' });
    expect(await sendUrl('audio', 'audio/mpeg', 'html')).toEqual({ mimetype: 'audio/mpeg' });
    expect(await sendUrl('audio', 'text/html', 'html')).toEqual({ reason: 'wrong_type' });
  });
});
