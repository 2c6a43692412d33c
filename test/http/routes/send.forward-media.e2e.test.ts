/**
 * A forward of a media message copies the bytes to be the new message's media (DATA_DIR/media/<device>/<outboxId>):
 * like every other media send, the copy is fsynced (file and folder) before the 202.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.mock('node:fs/promises', async (importOriginal) =>
  (await import('../../support/fsync-recorder.js')).recordingSyncs(await importOriginal()),
);

const { synced } = await import('../../support/fsync-recorder.js');

const { startTestGateway } = await import('../../support/gateway.js');
const { tempDir } = await import('../../support/temp-dir.js');

const TO = '4915112345678';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

describe('forwarded media on disk', () => {
  let gw: Awaited<ReturnType<typeof startTestGateway>>;
  let key: string;
  beforeAll(async () => {
    gw = await startTestGateway({ DATA_DIR: tempDir('dmg-fwd-'), DEFAULT_ENGINE: 'sandbox' });
    key = (await gw.api('POST', '/devices', { admin: true, json: { id: 'shop', name: 'Shop' } })).body.deviceKey;
  });
  afterAll(() => gw.close());

  it('is fsynced, file and folder, before the 202', async () => {
    const original = await gw.api('POST', '/devices/shop/send/image', {
      deviceKey: key,
      json: { to: TO, base64: PNG.toString('base64') },
    });
    expect(original.status).toBe(202);
    synced.splice(0);
    const forward = await gw.api('POST', '/devices/shop/send/forward', {
      deviceKey: key,
      json: { to: TO, messageId: original.body.waMessageId },
    });
    expect(forward.status, JSON.stringify(forward.body)).toBe(202);
    expect(synced).toEqual(
      expect.arrayContaining([
        join(gw.dataDir, 'media', 'shop', forward.body.outboxId),
        join(gw.dataDir, 'media', 'shop'),
      ]),
    );
  });
});
