/**
 * The media of a message this device sent (base64 or upload) are kept once it is `sent`, with the received
 * media and for the same INBOUND_MEDIA_RETENTION, so that the message can be forwarded; a message that failed
 * or was cancelled keeps nothing, and one deleted for everyone loses its file within seconds.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InboundMediaStore } from '../../../src/media/inbound-media-store.js';
import { outboxStream } from '../../../src/messages/message-events.js';
import { inboxStream } from '../../../src/inbox/inbox-events.js';
import { type SandboxDevice, createDevice, goOnline } from '../../outbox/support/sandbox-devices.js';
import { eventually } from '../../support/eventually.js';
import { startTestGateway } from '../../support/gateway.js';

const ALICE = '4915100003331';
const BOB = '4915100003332';
/** Sandbox numbers ending in 0000 are not on the network: a send to one fails for good. */
const NOBODY = '4915100000000';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
/** A PNG with bytes of its own, so that a forward carrying other bytes would show. */
const IMAGE = Buffer.concat([PNG, Buffer.alloc(4_000, 9)]);

type Gateway = Awaited<ReturnType<typeof startTestGateway>>;

async function startWithAliceAndBob(env: Record<string, string> = {}) {
  const gateway = await startTestGateway({
    DEFAULT_ENGINE: 'sandbox',
    OUTBOX_SPACING: '0ms',
    OUTBOX_RATE_PER_MINUTE: '100000',
    ...env,
  });
  const alice = await createDevice(gateway.api, 'alice', ALICE);
  const bob = await createDevice(gateway.api, 'bob', BOB);
  for (const device of [alice, bob]) await goOnline(gateway.api, device);
  return { gateway, alice, bob };
}

const keptPath = (gateway: Gateway, deviceId: string, waMessageId: string) =>
  new InboundMediaStore(gateway.dataDir).pathOf(deviceId, waMessageId);
const outboxPath = (gateway: Gateway, deviceId: string, outboxId: string) =>
  join(gateway.dataDir, 'media', deviceId, outboxId);

async function statusesOf(gateway: Gateway, deviceId: string, waMessageId: string): Promise<string[]> {
  return (await gateway.store.readStream(outboxStream(deviceId)))
    .filter((e) => e.type === 'MessageStatusChanged' && (e.data as { waMessageId: string }).waMessageId === waMessageId)
    .map((e) => (e.data as { status: string }).status);
}

async function sendImage(
  gateway: Gateway,
  device: SandboxDevice,
  to: string,
): Promise<{ outboxId: string; waMessageId: string }> {
  const answer = await gateway.api('POST', `/devices/${device.id}/send/image`, {
    deviceKey: device.key,
    json: { to, base64: IMAGE.toString('base64'), caption: 'the parcel' },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(202);
  return answer.body;
}

/** Sends an image and waits until it is `sent` and its file has moved to the kept media. */
async function sendAndKeep(gateway: Gateway, device: SandboxDevice, to: string) {
  const sent = await sendImage(gateway, device, to);
  await eventually(
    async () => (await statusesOf(gateway, device.id, sent.waMessageId)).includes('sent'),
    'the image sent',
  );
  const kept = keptPath(gateway, device.id, sent.waMessageId);
  await eventually(() => existsSync(kept), 'the sent image kept', 5_000);
  expect(existsSync(outboxPath(gateway, device.id, sent.outboxId))).toBe(false);
  return { ...sent, kept };
}

describe('media of sent messages', () => {
  let gateway: Gateway;
  let alice: SandboxDevice;
  let bob: SandboxDevice;
  beforeAll(async () => {
    ({ gateway, alice, bob } = await startWithAliceAndBob());
  });
  afterAll(() => gateway.close());

  it('a sent image can still be forwarded: 202, and the recipient gets the same bytes', async () => {
    const original = await sendAndKeep(gateway, alice, BOB);
    const forward = await gateway.api('POST', `/devices/${alice.id}/send/forward`, {
      deviceKey: alice.key,
      json: { to: BOB, messageId: original.waMessageId },
    });
    expect(forward.status, JSON.stringify(forward.body)).toBe(202);
    const atBob = await eventually(
      async () =>
        (await gateway.store.readStream(inboxStream(bob.id))).find(
          (e) =>
            e.type === 'MessageReceived' &&
            (e.data as { waMessageId: string }).waMessageId === forward.body.waMessageId,
        )?.data as any,
      'bob to receive the forward',
    );
    expect(atBob).toMatchObject({
      type: 'image',
      body: 'the parcel',
      media: { status: 'ready', size: IMAGE.length, sha256: createHash('sha256').update(IMAGE).digest('hex') },
    });
    const served = await eventually(async () => {
      const answer = await fetch(`${gateway.url}/devices/${bob.id}/messages/${forward.body.waMessageId}/media`, {
        headers: { 'x-device-key': bob.key },
      });
      return answer.status === 200 ? answer : undefined;
    }, "bob's copy served");
    expect(Buffer.from(await served.arrayBuffer()).equals(IMAGE)).toBe(true);
    // The kept file stays for the original's further forwards.
    expect(existsSync(original.kept)).toBe(true);
  });

  it('keeps the media of a sent message only: a failed or a cancelled one keeps nothing', async () => {
    const sent = await sendAndKeep(gateway, alice, BOB);
    expect(existsSync(sent.kept)).toBe(true);

    const failed = await sendImage(gateway, alice, NOBODY);
    await eventually(
      async () => (await statusesOf(gateway, alice.id, failed.waMessageId)).includes('failed'),
      'the send to nobody failed',
    );
    await eventually(
      () => !existsSync(outboxPath(gateway, alice.id, failed.outboxId)),
      "the failed message's file removed",
      5_000,
    );
    expect(existsSync(keptPath(gateway, alice.id, failed.waMessageId))).toBe(false);

    // A device that never comes online: its message waits until cancelled.
    const carol = await createDevice(gateway.api, 'carol', '4915100003333');
    const waiting = await sendImage(gateway, carol, BOB);
    expect(existsSync(outboxPath(gateway, carol.id, waiting.outboxId))).toBe(true);
    const cancelled = await gateway.api('DELETE', `/devices/${carol.id}/send/${waiting.waMessageId}`, {
      deviceKey: carol.key,
    });
    expect(cancelled.status).toBe(200);
    expect(existsSync(outboxPath(gateway, carol.id, waiting.outboxId))).toBe(false);
    expect(existsSync(keptPath(gateway, carol.id, waiting.waMessageId))).toBe(false);

    for (const [device, message] of [
      [alice, failed],
      [carol, waiting],
    ] as const) {
      const forward = await gateway.api('POST', `/devices/${device.id}/send/forward`, {
        deviceKey: device.key,
        json: { to: BOB, messageId: message.waMessageId },
      });
      expect(forward.status).toBe(410);
      expect(forward.body.code).toBe('media_expired');
    }
  });

  it('an own media message deleted for everyone loses its kept file within seconds', async () => {
    const sent = await sendAndKeep(gateway, alice, BOB);
    const deleting = await gateway.api('DELETE', `/devices/${alice.id}/send/${sent.waMessageId}`, {
      deviceKey: alice.key,
    });
    expect(deleting.status).toBe(202);
    expect(deleting.body.status).toBe('deleting');
    await eventually(
      async () => (await statusesOf(gateway, alice.id, sent.waMessageId)).includes('deleted'),
      'the message deleted',
    );
    // Within seconds, not at the end of the 30-day retention.
    await eventually(() => !existsSync(sent.kept), 'the kept file of the deleted message removed', 10_000);
  });
});

describe('media of sent messages, past INBOUND_MEDIA_RETENTION', () => {
  let gateway: Gateway;
  afterAll(() => gateway.close());

  it('are removed by the retention sweep, and a forward then answers 410 media_expired', async () => {
    let alice: SandboxDevice;
    ({ gateway, alice } = await startWithAliceAndBob({ INBOUND_MEDIA_RETENTION: '1s' }));
    const sent = await sendAndKeep(gateway, alice, BOB);
    await eventually(() => !existsSync(sent.kept), 'the sweep to remove the kept file', 5_000);
    const forward = await gateway.api('POST', `/devices/${alice.id}/send/forward`, {
      deviceKey: alice.key,
      json: { to: BOB, messageId: sent.waMessageId },
    });
    expect(forward.status).toBe(410);
    expect(forward.body.code).toBe('media_expired');
  });
});
