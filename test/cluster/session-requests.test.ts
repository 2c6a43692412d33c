/**
 * Session commands asked of a process that does not run the device go to its owner through the store
 * (session-requests-<id>): two gateways in this process on one SQLite file, as two processes would be.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, tempDir } from '../support/gateway.js';
import { eventually } from '../support/eventually.js';
import { createSandboxDevice, waitForState } from '../support/sessions.js';

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

describe('session commands through another process', () => {
  const gateways: TestGateway[] = [];
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.close();
  });

  it('pairs by code through a process that does not run the device: the owner asks its connection for the code', async () => {
    const dataDir = tempDir('dmg-pair-');
    for (const worker of ['1', '2']) {
      gateways.push(await startTestGateway({ DATA_DIR: dataDir, GATEWAY_CLUSTER: 'true', GATEWAY_WORKER: worker, LEASE_TIMEOUT: '2s', DEFAULT_ENGINE: 'sandbox' }));
    }
    const device = await createSandboxDevice(gateways[0]!.api, 'pair-elsewhere');
    const owned = async (gateway: TestGateway) => (await gateway.api('GET', '/health')).body.cluster.devicesOwned as number;
    const owner = await eventually(async () => {
      for (const gateway of gateways) if ((await owned(gateway)) === 1) return gateway;
      return undefined;
    }, 'an owner for the device');
    const other = gateways.find((gateway) => gateway !== owner)!;

    const unknown = await other.api('POST', `/devices/${device.id}/session/pair`, { deviceKey: device.key, json: { phone: '4915100000000' } });
    expect(unknown.status).toBe(400);
    const paired = await other.api('POST', `/devices/${device.id}/session/pair`, { deviceKey: device.key, json: { phone: '4915100007777' } });
    expect(paired.status).toBe(202);
    expect(paired.body).toEqual({ state: 'pairing', pairingCode: expect.stringMatching(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/), expiresAt: expect.any(String) });
    expect((await other.api('GET', `/devices/${device.id}/session/state`, { deviceKey: device.key })).body.state).toBe('pairing');
    // The phone enters the code at the owner's (simulated) network.
    const entered = await owner.api('POST', `/sandbox/devices/${device.id}/pair`, { admin: true, json: { code: paired.body.pairingCode } });
    expect(entered.status).toBe(202);
    expect((await waitForState(other.api, device, 'online')).phone).toBe('4915100007777');
    const linked = await other.api('POST', `/devices/${device.id}/session/pair`, { deviceKey: device.key, json: { phone: '4915100007777' } });
    expect(linked.status).toBe(409);
    expect(linked.body.code).toBe('pairing_unavailable');
    expect(await owned(owner)).toBe(1);
    expect(await owned(other)).toBe(0);
  });
});
