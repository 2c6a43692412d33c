/**
 * The media of a message this device sent are served like received ones (GET /messages/:waMessageId/media)
 * once kept, from its `sent` on, and its views then show `media.url`; before that, or when they are not kept,
 * 404 media_unavailable says why (`not_sent`, `not_kept`, `revoked`), and past INBOUND_MEDIA_RETENTION 410.
 * The account's own messages from another linked device are served as received media are.
 * Real gateway, sandbox devices, SQLite, HTTP.
 */
import { once } from 'node:events';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxStream } from '../../src/messages/message-events.js';
import { type SandboxDevice, createDevice, goOnline } from '../outbox/support/sandbox-devices.js';
import { eventually } from '../support/eventually.js';
import { startTestGateway } from '../support/gateway.js';

const ALICE = '4915100005551';
const BOB = '4915100005552';
/** Sandbox numbers ending in 0000 are not on the network: a send to one fails for good. */
const NOBODY = '4915100000000';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
/** A PNG with bytes of its own. */
const IMAGE = Buffer.concat([PNG, Buffer.alloc(3_000, 5)]);
const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(2_000, 7)]);

type Gateway = Awaited<ReturnType<typeof startTestGateway>>;

const mediaPath = (device: SandboxDevice, waMessageId: string) => `/devices/${device.id}/messages/${waMessageId}/media`;

async function statusesOf(gateway: Gateway, deviceId: string, waMessageId: string): Promise<string[]> {
  return (await gateway.store.readStream(outboxStream(deviceId)))
    .filter((e) => e.type === 'MessageStatusChanged' && (e.data as { waMessageId: string }).waMessageId === waMessageId)
    .map((e) => (e.data as { status: string }).status);
}

async function sendImage(
  gateway: Gateway,
  device: SandboxDevice,
  to: string,
  media: Record<string, string> = { base64: IMAGE.toString('base64') },
) {
  const answer = await gateway.api('POST', `/devices/${device.id}/send/image`, {
    deviceKey: device.key,
    json: { to, caption: 'the parcel', ...media },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(202);
  return answer.body as { outboxId: string; waMessageId: string };
}

async function waitForStatus(
  gateway: Gateway,
  device: SandboxDevice,
  waMessageId: string,
  status: string,
): Promise<void> {
  await eventually(
    async () => (await statusesOf(gateway, device.id, waMessageId)).includes(status),
    `${waMessageId} ${status}`,
  );
  // The index takes the status after the event is written: wait until the message's view shows it.
  await eventually(async () => {
    const view = await gateway.api('GET', `/devices/${device.id}/messages/${waMessageId}`, { deviceKey: device.key });
    return (
      view.status === 200 && (view.body.statusHistory as Array<{ status: string }>).some((s) => s.status === status)
    );
  }, `${waMessageId} ${status} in the message index`);
}

/** The media once served (the move of the file follows `sent` by a moment). */
const served = (gateway: Gateway, device: SandboxDevice, waMessageId: string) =>
  eventually(async () => {
    const answer = await fetch(`${gateway.url}${mediaPath(device, waMessageId)}`, {
      headers: { 'x-device-key': device.key },
    });
    return answer.status === 200 ? answer : undefined;
  }, `the media of ${waMessageId} served`);

describe('media of sent messages, served', () => {
  let gateway: Gateway;
  let alice: SandboxDevice;
  let bob: SandboxDevice;
  let twin: SandboxDevice;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    gateway = await startTestGateway({
      DEFAULT_ENGINE: 'sandbox',
      OUTBOX_SPACING: '0ms',
      OUTBOX_RATE_PER_MINUTE: '100000',
      // url media from the test's own server on 127.0.0.1.
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    alice = await createDevice(gateway.api, 'alice', ALICE);
    bob = await createDevice(gateway.api, 'bob', BOB);
    // Another linked device of Alice's account: what Alice sends reaches it as fromMe.
    twin = await createDevice(gateway.api, 'alice-twin', ALICE);
    for (const device of [alice, bob, twin]) await goOnline(gateway.api, device);
    server = createServer((_req, res) => void res.writeHead(200, { 'content-type': 'image/png' }).end(IMAGE));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await gateway.close();
    server.close();
  });

  it('a sent image: 200 with its bytes, type and a file name of its waMessageId; its views show media.url', async () => {
    const sent = await sendImage(gateway, alice, BOB);
    await waitForStatus(gateway, alice, sent.waMessageId, 'sent');
    const answer = await served(gateway, alice, sent.waMessageId);
    expect(answer.headers.get('content-type')).toBe('image/png');
    expect(answer.headers.get('content-length')).toBe(String(IMAGE.length));
    expect(answer.headers.get('content-disposition')).toBe(`attachment; filename="${sent.waMessageId}.png"`);
    expect(Buffer.from(await answer.arrayBuffer()).equals(IMAGE)).toBe(true);

    const url = mediaPath(alice, sent.waMessageId);
    const view = await gateway.api('GET', `/devices/${alice.id}/messages/${sent.waMessageId}`, {
      deviceKey: alice.key,
    });
    expect(view.status).toBe(200);
    // No sha256: the bytes of a sent media were never hashed, and a view does not read them.
    expect(view.body.media).toEqual({ mimetype: 'image/png', size: IMAGE.length, url });
    const page = await gateway.api('GET', `/devices/${alice.id}/chats/${BOB}/messages?limit=50`, {
      deviceKey: alice.key,
    });
    expect(page.status).toBe(200);
    expect(page.body.items.find((m: { waMessageId: string }) => m.waMessageId === sent.waMessageId).media).toEqual({
      mimetype: 'image/png',
      size: IMAGE.length,
      url,
    });
    // The url is the one the media are served at.
    expect(
      (await fetch(`${gateway.url}${view.body.media.url}`, { headers: { 'x-device-key': alice.key } })).status,
    ).toBe(200);
  });

  it('an uploaded file: served with the file name it was uploaded with', async () => {
    const form = new FormData();
    form.append('to', BOB);
    form.append('file', new Blob([PDF]), 'report.pdf');
    const response = await fetch(`${gateway.url}/devices/${alice.id}/send/file`, {
      method: 'POST',
      headers: { 'x-device-key': alice.key },
      body: form,
    });
    expect(response.status).toBe(202);
    const sent = (await response.json()) as { waMessageId: string };
    await waitForStatus(gateway, alice, sent.waMessageId, 'sent');
    const answer = await served(gateway, alice, sent.waMessageId);
    expect(answer.headers.get('content-type')).toBe('application/pdf');
    expect(answer.headers.get('content-disposition')).toBe('attachment; filename="report.pdf"');
    expect(Buffer.from(await answer.arrayBuffer()).equals(PDF)).toBe(true);
    const view = await gateway.api('GET', `/devices/${alice.id}/messages/${sent.waMessageId}`, {
      deviceKey: alice.key,
    });
    expect(view.body.media).toEqual({
      mimetype: 'application/pdf',
      size: PDF.length,
      filename: 'report.pdf',
      url: mediaPath(alice, sent.waMessageId),
    });
  });

  it('before `sent` (queued on a device that is not online), and once cancelled: 404 media_unavailable, reason not_sent, and no url', async () => {
    // A device that never comes online: its message stays queued.
    const carol = await createDevice(gateway.api, 'carol', '4915100005553');
    const waiting = await sendImage(gateway, carol, BOB);
    const queued = await gateway.api('GET', mediaPath(carol, waiting.waMessageId), { deviceKey: carol.key });
    expect(queued.status).toBe(404);
    expect(queued.body).toMatchObject({ code: 'media_unavailable', reason: 'not_sent' });
    const view = await gateway.api('GET', `/devices/${carol.id}/messages/${waiting.waMessageId}`, {
      deviceKey: carol.key,
    });
    expect(view.body).toMatchObject({ status: 'queued', media: { mimetype: 'image/png', size: IMAGE.length } });
    expect(view.body.media.url).toBeUndefined();

    expect(
      (await gateway.api('DELETE', `/devices/${carol.id}/send/${waiting.waMessageId}`, { deviceKey: carol.key }))
        .status,
    ).toBe(200);
    await eventually(
      async () =>
        (await gateway.api('GET', `/devices/${carol.id}/messages/${waiting.waMessageId}`, { deviceKey: carol.key }))
          .body.status === 'cancelled',
      'cancelled',
    );
    const cancelled = await gateway.api('GET', mediaPath(carol, waiting.waMessageId), { deviceKey: carol.key });
    expect(cancelled.status).toBe(404);
    expect(cancelled.body).toMatchObject({ code: 'media_unavailable', reason: 'not_sent' });
  });

  it('a send that failed: 404 media_unavailable, reason not_sent', async () => {
    const failed = await sendImage(gateway, alice, NOBODY);
    await waitForStatus(gateway, alice, failed.waMessageId, 'failed');
    const answer = await gateway.api('GET', mediaPath(alice, failed.waMessageId), { deviceKey: alice.key });
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ code: 'media_unavailable', reason: 'not_sent' });
  });

  it('deleted for everyone (DELETE /send/:waMessageId): 404 media_unavailable, reason revoked', async () => {
    const sent = await sendImage(gateway, alice, BOB);
    await waitForStatus(gateway, alice, sent.waMessageId, 'sent');
    await served(gateway, alice, sent.waMessageId);
    const deleting = await gateway.api('DELETE', `/devices/${alice.id}/send/${sent.waMessageId}`, {
      deviceKey: alice.key,
    });
    expect(deleting.status).toBe(202);
    await waitForStatus(gateway, alice, sent.waMessageId, 'deleted');
    const answer = await gateway.api('GET', mediaPath(alice, sent.waMessageId), { deviceKey: alice.key });
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ code: 'media_unavailable', reason: 'revoked' });
    const view = await gateway.api('GET', `/devices/${alice.id}/messages/${sent.waMessageId}`, {
      deviceKey: alice.key,
    });
    expect(view.body).toMatchObject({ revoked: true });
    expect(view.body.media).toBeUndefined();
  });

  it('media sent by url are fetched when sent and not kept: 404 media_unavailable, reason not_kept, and no url', async () => {
    const sent = await sendImage(gateway, alice, BOB, { url: `${base}/photo.png` });
    await waitForStatus(gateway, alice, sent.waMessageId, 'sent');
    const answer = await gateway.api('GET', mediaPath(alice, sent.waMessageId), { deviceKey: alice.key });
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ code: 'media_unavailable', reason: 'not_kept' });
    const view = await gateway.api('GET', `/devices/${alice.id}/messages/${sent.waMessageId}`, {
      deviceKey: alice.key,
    });
    expect(view.body.media?.url).toBeUndefined();
  });

  it("the account's own image sent from another linked device (fromMe) is served as received media are", async () => {
    const sent = await sendImage(gateway, alice, BOB);
    const onTwin = await eventually(async () => {
      const view = await gateway.api('GET', `/devices/${twin.id}/messages/${sent.waMessageId}`, {
        deviceKey: twin.key,
      });
      return view.status === 200 && view.body.media?.status === 'ready' ? view.body : undefined;
    }, 'the image on the twin');
    expect(onTwin).toMatchObject({
      fromMe: true,
      chatId: BOB,
      media: { mimetype: 'image/png', size: IMAGE.length, url: mediaPath(twin, sent.waMessageId) },
    });
    const answer = await served(gateway, twin, sent.waMessageId);
    expect(answer.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await answer.arrayBuffer()).equals(IMAGE)).toBe(true);
  });

  it('a sent message without media: 404 not_found', async () => {
    const text = await gateway.api('POST', `/devices/${alice.id}/send/text`, {
      deviceKey: alice.key,
      json: { to: BOB, text: 'no picture' },
    });
    expect(text.status).toBe(202);
    await waitForStatus(gateway, alice, text.body.waMessageId, 'sent');
    const answer = await gateway.api('GET', mediaPath(alice, text.body.waMessageId), { deviceKey: alice.key });
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe('not_found');
  });
});

describe('media of sent messages, past INBOUND_MEDIA_RETENTION', () => {
  let gateway: Gateway;
  afterAll(() => gateway.close());

  it('answer 410 media_expired, reason expired', async () => {
    gateway = await startTestGateway({
      DEFAULT_ENGINE: 'sandbox',
      OUTBOX_SPACING: '0ms',
      INBOUND_MEDIA_RETENTION: '1s',
    });
    const alice = await createDevice(gateway.api, 'alice', ALICE);
    await goOnline(gateway.api, alice);
    const sent = await sendImage(gateway, alice, BOB);
    await waitForStatus(gateway, alice, sent.waMessageId, 'sent');
    const answer = await eventually(
      async () => {
        const media = await gateway.api('GET', mediaPath(alice, sent.waMessageId), { deviceKey: alice.key });
        return media.status === 410 ? media : undefined;
      },
      'the media expired',
      5_000,
    );
    expect(answer.body).toMatchObject({ code: 'media_expired', reason: 'expired' });
  });
});
