/**
 * A sent message's media between the `sent` the index records (its view then shows `media.url`) and the
 * outbox's move of its file to the kept media: served from where it waited, not answered 410 media_expired
 * (a final answer for a passing state). The move is held back here, as a copy across file systems of a large
 * file holds it. Found by review; real gateway, sandbox devices.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { MediaStore } from '../../src/media/media-store.js';
import { createDevice, goOnline } from '../outbox/support/sandbox-devices.js';
import { eventually } from '../support/eventually.js';
import { startTestGateway } from '../support/gateway.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const IMAGE = Buffer.concat([PNG, Buffer.alloc(3_000, 9)]);

describe('sent media before its file is moved to the kept media', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  afterAll(async () => {
    vi.restoreAllMocks();
    await gateway?.close();
  });

  it('is served from the outbox until the move, then from the kept media', async () => {
    let moved = false;
    let releaseMove!: () => void;
    const moveHeld = new Promise<void>((resolve) => (releaseMove = resolve));
    const keepSent = MediaStore.prototype.keepSent;
    vi.spyOn(MediaStore.prototype, 'keepSent').mockImplementation(async function (this: MediaStore, ...args) {
      await moveHeld;
      const outcome = await keepSent.apply(this, args);
      moved = true;
      return outcome;
    });
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox', OUTBOX_SPACING: '0ms' });
    const alice = await createDevice(gateway.api, 'alice', '4915100005561');
    await goOnline(gateway.api, alice);
    const sent = await gateway.api('POST', `/devices/${alice.id}/send/image`, {
      deviceKey: alice.key,
      json: { to: '4915100005562', base64: IMAGE.toString('base64') },
    });
    expect(sent.status).toBe(202);
    const { waMessageId } = sent.body as { waMessageId: string };
    const media = () =>
      fetch(`${gateway.url}/devices/${alice.id}/messages/${waMessageId}/media`, {
        headers: { 'x-device-key': alice.key },
      });

    await eventually(async () => {
      const view = await gateway.api('GET', `/devices/${alice.id}/messages/${waMessageId}`, { deviceKey: alice.key });
      return view.body.media?.url !== undefined;
    }, 'media.url in the view');
    expect(moved).toBe(false);
    const before = await media();
    expect(before.status).toBe(200);
    expect(Buffer.from(await before.arrayBuffer()).equals(IMAGE)).toBe(true);

    releaseMove();
    await eventually(() => moved, 'the move');
    const after = await media();
    expect(after.status).toBe(200);
    expect(Buffer.from(await after.arrayBuffer()).equals(IMAGE)).toBe(true);
  });
});
