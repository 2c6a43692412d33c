/**
 * A forward of a media message copies the bytes to be the new message's media (DATA_DIR/media/<device>/<outboxId>):
 * like every other media send, the copy is fsynced (file and folder) before the 202.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

/** Every path whose handle was fsynced. */
const synced = new Set<string>();
vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs/promises')>();
  const open = async (...args: Parameters<typeof original.open>) => {
    const handle = await original.open(...args);
    const sync = handle.sync.bind(handle);
    handle.sync = async () => {
      synced.add(String(args[0]));
      return sync();
    };
    return handle;
  };
  return { ...original, open, default: { ...original, open } };
});

const { startTestGateway } = await import('../../support/gateway.js');
const { tempDir } = await import('../../support/temp-dir.js');

const TO = '4915112345678';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

describe('forwarded media on disk', () => {
  let gw: Awaited<ReturnType<typeof startTestGateway>>;
  let key: string;
  beforeAll(async () => {
    gw = await startTestGateway({ DATA_DIR: tempDir('dmg-fwd-'), DEFAULT_ENGINE: 'sandbox' });
    key = (await gw.api('POST', '/devices', { admin: true, json: { id: 'shop', name: 'Shop' } })).body.deviceKey;
  });
  afterAll(() => gw.close());

  it('is fsynced, file and folder, before the 202', async () => {
    const original = await gw.api('POST', '/devices/shop/send/image', { deviceKey: key, json: { to: TO, base64: PNG.toString('base64') } });
    expect(original.status).toBe(202);
    synced.clear();
    const forward = await gw.api('POST', '/devices/shop/send/forward', { deviceKey: key, json: { to: TO, messageId: original.body.waMessageId } });
    expect(forward.status, JSON.stringify(forward.body)).toBe(202);
    expect([...synced]).toEqual(expect.arrayContaining([join(gw.dataDir, 'media', 'shop', forward.body.outboxId), join(gw.dataDir, 'media', 'shop')]));
  });
});
