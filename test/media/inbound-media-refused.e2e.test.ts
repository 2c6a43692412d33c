/**
 * A sandbox message the store refuses is never recorded: the media its download kept on arrival are
 * removed (no message points to them, and the retention sweep goes by the recorded messages).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type Gateway, startGateway } from '../../src/gateway.js';
import { createDevice, goOnline, received } from '../outbox/support/sandbox-devices.js';
import { eventually } from '../support/eventually.js';
import { FailingWritesStore } from '../support/failing-store.js';
import { apiClient, testConfig } from '../support/gateway.js';

describe('received media of a message the store refuses', () => {
  let gateway: Gateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it("are removed: the inbound answers the store's error and no file is left", async () => {
    let failing: FailingWritesStore | undefined;
    const config = testConfig({ DEFAULT_ENGINE: 'sandbox' });
    gateway = await startGateway(config, {
      logger: pino({ level: 'silent' }),
      wrapStore: (store) => (failing = new FailingWritesStore(store)),
    });
    const api = apiClient(gateway.url);
    const device = await createDevice(api, 'shop', '4915100001120');
    await goOnline(api, device);
    const image = (body: string) => ({
      from: '4915100004443',
      type: 'image',
      body,
      media: { base64: Buffer.alloc(64 * 1024, body).toString('base64'), mimetype: 'image/jpeg' },
    });
    const folder = join(config.dataDir, 'inbound-media', 'shop');
    const kept = () => readdirSync(folder);

    expect((await api('POST', '/sandbox/devices/shop/inbound', { admin: true, json: image('kept') })).status).toBe(202);
    expect(kept()).toHaveLength(1);

    failing!.failing = true;
    const refused = await api('POST', '/sandbox/devices/shop/inbound', { admin: true, json: image('refused') });
    expect(refused.status).toBe(507);
    // The download ended before the store was asked; its file goes once the message is given up.
    await eventually(() => kept().length === 1, "the refused message's media removed");
    expect((await received(gateway.store, 'shop')).map((m) => m.body)).toEqual(['kept']);
  });
});
