/**
 * Received media: kept for INBOUND_MEDIA_RETENTION (then 410 media_expired, and the sweep removes the
 * file), checked against the size limit, metadata only with INBOUND_MEDIA=off.
 */
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { InboundMediaStore } from '../../src/media/inbound-media-store.js';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { createDevice, goOnline } from '../outbox/support/sandbox-devices.js';
import { eventually } from '../support/eventually.js';
import { startTestGateway } from '../support/gateway.js';
import { TestClock } from '../support/test-clock.js';

const FROM = '4915100004442';

describe('received media', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>> | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  async function receiveImage(env: Record<string, string>, bytes: Buffer, clock?: TestClock) {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox', ...env }, clock ? { clock } : {});
    const device = await createDevice(gateway.api, 'shop', '4915100001110');
    await goOnline(gateway.api, device);
    const inbound = await gateway.api('POST', `/sandbox/devices/shop/inbound`, {
      admin: true,
      json: { from: FROM, type: 'image', media: { base64: bytes.toString('base64'), mimetype: 'image/jpeg' } },
    });
    expect(inbound.status).toBe(202);
    const received = await eventually(
      async () =>
        (await gateway!.store.readStream(inboxStream('shop'))).find((e) => e.type === 'MessageReceived')?.data as any,
      'received',
    );
    return { device, waMessageId: inbound.body.waMessageId as string, received };
  }

  it('past the retention period: 410 media_expired, and the file is swept', async () => {
    // Running: the store stamps the media with the system time; the test moves an hour on in no time.
    const clock = new TestClock({ running: true });
    const { device, waMessageId, received } = await receiveImage(
      { INBOUND_MEDIA_RETENTION: '1h' },
      Buffer.alloc(2048, 1),
      clock,
    );
    expect(received.media).toMatchObject({ status: 'ready', size: 2048 });
    const url = `/devices/shop/messages/${waMessageId}/media`;
    expect((await gateway!.api('GET', url, { deviceKey: device.key })).status).toBe(200);
    const path = new InboundMediaStore(gateway!.dataDir).pathOf('shop', waMessageId);
    expect(existsSync(path)).toBe(true);
    await clock.advance(59 * 60_000);
    expect((await gateway!.api('GET', url, { deviceKey: device.key })).status).toBe(200);
    await clock.advance(61_000);
    const expired = await gateway!.api('GET', url, { deviceKey: device.key });
    expect(expired.status).toBe(410);
    expect(expired.body.code).toBe('media_expired');
    expect(expired.body.reason).toBe('expired');
    expect(existsSync(path)).toBe(true);
    // The sweep that fell due meanwhile looked for media stored an hour before it; the next one, an hour on,
    // removes the file (410 by its age until then).
    await clock.advance(60 * 60_000);
    await eventually(() => !existsSync(path), 'the sweep to remove the file', 5_000);
  });

  it('serves media whose sender claimed a type or a name no header can carry as bytes, never a 5xx', async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox' });
    const device = await createDevice(gateway.api, 'shop', '4915100001110');
    await goOnline(gateway.api, device);
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    // What another app may put in a WhatsApp message: control characters, text beyond Latin-1, a lone surrogate.
    const claims = [
      { type: 'image', mimetype: 'image/png\r\nX-Injected: 1', served: 'application/octet-stream' },
      { type: 'image', mimetype: 'text/plain; name="\u20ac"', served: 'application/octet-stream' },
      { type: 'file', mimetype: 'image/png', filename: '\ud800.png', served: 'image/png' },
    ];
    for (const claim of claims) {
      const inbound = await gateway.api('POST', '/sandbox/devices/shop/inbound', {
        admin: true,
        json: {
          from: FROM,
          type: claim.type,
          media: { base64: png, mimetype: claim.mimetype, ...(claim.filename ? { filename: claim.filename } : {}) },
        },
      });
      expect(inbound.status).toBe(202);
      const url = `/devices/shop/messages/${inbound.body.waMessageId}/media`;
      const served = await eventually(async () => {
        const answer = await fetch(`${gateway!.url}${url}`, { headers: { 'x-device-key': device.key } });
        return answer.status === 404 ? undefined : answer;
      }, 'the media stored');
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe(claim.served);
      expect(served.headers.get('x-injected')).toBeNull();
      expect(Buffer.from(await served.arrayBuffer()).toString('base64')).toBe(png);
    }
  });

  it('a message its sender deleted for everyone no longer serves its media (404 media_unavailable, reason revoked), and its file is removed', async () => {
    const { device, waMessageId } = await receiveImage({}, Buffer.alloc(512, 4));
    const path = new InboundMediaStore(gateway!.dataDir).pathOf('shop', waMessageId);
    const url = `/devices/shop/messages/${waMessageId}/media`;
    await eventually(
      async () => (await gateway!.api('GET', url, { deviceKey: device.key })).status === 200,
      'the media served',
    );
    expect(
      (
        await gateway!.api('POST', '/sandbox/devices/shop/inbound', {
          admin: true,
          json: { from: FROM, type: 'revoke', messageId: waMessageId },
        })
      ).status,
    ).toBe(202);
    await eventually(
      async () =>
        (await gateway!.api('GET', `/devices/shop/messages/${waMessageId}`, { deviceKey: device.key })).body.revoked ===
        true,
      'the revoke',
    );
    const answer = await gateway!.api('GET', url, { deviceKey: device.key });
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ code: 'media_unavailable', reason: 'revoked' });
    // Within seconds, not at the end of the 30-day retention.
    await eventually(() => !existsSync(path), 'the file of the deleted message removed', 10_000);
  });

  it('INBOUND_MEDIA=off keeps metadata only', async () => {
    const { device, waMessageId, received } = await receiveImage({ INBOUND_MEDIA: 'off' }, Buffer.alloc(100, 2));
    expect(received.media).toEqual({ mimetype: 'image/jpeg', size: 100 });
    const answer = await gateway!.api('GET', `/devices/shop/messages/${waMessageId}/media`, { deviceKey: device.key });
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({
      code: 'media_unavailable',
      reason: 'metadata_only',
      detail: expect.stringContaining('INBOUND_MEDIA'),
    });
  });

  it('media over the size limit are not kept (status failed), never a 5xx', async () => {
    const { device, waMessageId, received } = await receiveImage(
      { MEDIA_MAX_BYTES: '4096', MEDIA_FILE_MAX_BYTES: '65536' },
      Buffer.alloc(5000, 3),
    );
    expect(received.media).toMatchObject({ status: 'failed' });
    expect(received.media.url).toBeUndefined();
    const answer = await gateway!.api('GET', `/devices/shop/messages/${waMessageId}/media`, { deviceKey: device.key });
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ code: 'media_unavailable', reason: 'failed' });
    expect(existsSync(new InboundMediaStore(gateway!.dataDir).pathOf('shop', waMessageId))).toBe(false);
  });

  it('takes media of megabytes in the JSON body (streamed to disk, not limited like the other fields) and serves them whole', async () => {
    const bytes = Buffer.alloc(1024 * 1024 + 17);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) & 0xff;
    const { device, waMessageId, received } = await receiveImage({}, bytes);
    expect(received.media).toMatchObject({ status: 'ready', size: bytes.length });
    const served = await fetch(`${gateway!.url}/devices/shop/messages/${waMessageId}/media`, {
      headers: { 'x-device-key': device.key },
    });
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).toBe(true);
  });
});
