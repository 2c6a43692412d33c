import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLinkPreviewProvider, openGraphOf } from '../../src/media/link-preview.js';
import { OutboundGuard } from '../../src/net/outbound-guard.js';

const JPEG = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]),
  Buffer.from('JFIF\0', 'latin1'),
  Buffer.alloc(200),
]);
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

const page = (head: string) => `<!doctype html><html><head>${head}</head><body><p>${'x'.repeat(100)}</p></body></html>`;

describe('link previews from Open Graph data', () => {
  let server: Server;
  let base: string;
  const open = new OutboundGuard({ allowPrivateNetworks: true });
  const closed = new OutboundGuard({ allowPrivateNetworks: false });

  beforeAll(async () => {
    server = createServer((request, response) => {
      const routes: Record<string, [number, string, string | Buffer]> = {
        '/article': [
          200,
          'text/html; charset=utf-8',
          page(`<title>Fallback</title>
            <meta property="og:title" content="Caf&#233; &amp; Bar &#x2013; News">
            <meta content='The best coffee in town' property='og:description'>
            <meta property="og:url" content="/canonical">
            <meta property="og:image" content="/thumb.jpg">`),
        ],
        '/plain-title': [
          200,
          'text/html',
          page('<title>\n  Just a   title </title><meta name="description" content="Described">'),
        ],
        '/png-image': [
          200,
          'text/html',
          page('<meta property="og:title" content="With a PNG"><meta property="og:image" content="/thumb.png">'),
        ],
        '/no-title': [200, 'text/html', page('<meta name="viewport" content="width=device-width">')],
        '/json': [200, 'application/json', '{"title":"not html"}'],
        '/thumb.jpg': [200, 'image/jpeg', JPEG],
        '/thumb.png': [200, 'image/png', PNG],
      };
      const route = routes[request.url ?? ''];
      if (!route) {
        response.writeHead(404).end('missing');
        return;
      }
      response.writeHead(route[0], { 'content-type': route[1] }).end(route[2]);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    open.destroy();
    closed.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('reads og:title, og:description, og:url and a JPEG og:image as the thumbnail', async () => {
    const preview = await createLinkPreviewProvider(open)(`${base}/article`);
    expect(preview).toEqual({
      title: 'Café & Bar – News',
      description: 'The best coffee in town',
      canonicalUrl: `${base}/canonical`,
      jpegThumbnail: JPEG,
    });
  });

  it('falls back to <title> and the description meta tag; a thumbnail that is not JPEG is left out', async () => {
    expect(await createLinkPreviewProvider(open)(`${base}/plain-title`)).toEqual({
      title: 'Just a title',
      description: 'Described',
    });
    expect(await createLinkPreviewProvider(open)(`${base}/png-image`)).toEqual({ title: 'With a PNG' });
  });

  it('answers null (send without a preview) when there is none to be had', async () => {
    const previews = createLinkPreviewProvider(open);
    expect(await previews(`${base}/no-title`)).toBeNull();
    expect(await previews(`${base}/json`)).toBeNull();
    expect(await previews(`${base}/missing`)).toBeNull();
    expect(await previews('http://127.0.0.1:1/refused')).toBeNull();
  });

  it('goes through the outbound guard: a private address is not fetched', async () => {
    expect(await createLinkPreviewProvider(closed)(`${base}/article`)).toBeNull();
  });

  it('parses tags in any attribute order and quoting, and ignores the body', () => {
    expect(
      openGraphOf(
        `<head><meta content="B" property="og:title"><meta property=og:image content=x.jpg></head><body><meta property="og:title" content="not me"></body>`,
      ),
    ).toEqual({
      title: 'B',
      image: 'x.jpg',
    });
  });
});
