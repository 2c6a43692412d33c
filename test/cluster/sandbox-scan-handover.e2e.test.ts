/**
 * A sandbox scan (or pairing code entered) that reaches the device's owner while the device is being taken over there
 * (issue 30: `npm run bench -- scale` at 8 processes got `409 qr_unavailable` "the session is qr; a code can be
 * scanned only in state qr" while processes joined): the owner waits for the device's code instead of answering from
 * a process with no actor for it, and no answer contradicts itself (`503 busy`, try again, where no code is on show
 * though the state says one is).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SandboxEngine } from '../../src/engines/sandbox/sandbox-engine.js';
import { startTestGateway } from '../support/gateway.js';
import { eventually } from '../support/eventually.js';
import { createSandboxDevice, waitForState } from '../support/sessions.js';

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

const CLUSTER = { GATEWAY_CLUSTER: 'true', LEASE_TIMEOUT: '2s', DEFAULT_ENGINE: 'sandbox' };

describe('a sandbox scan while the device is taken over', () => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.close();
    gateway = undefined;
  });

  /** One process of a cluster, holding the lease of a device that shows its code. */
  async function deviceShowingQr(id: string) {
    gateway = await startTestGateway(CLUSTER);
    const device = await createSandboxDevice(gateway.api, id);
    await eventually(
      async () => (await gateway!.api('GET', '/health', { admin: true })).body.cluster.devicesOwned === 1,
      'the lease of the device',
    );
    const opened = await gateway.api('POST', `/devices/${device.id}/session/open`, { deviceKey: device.key });
    expect(opened.status).toBe(202);
    await waitForState(gateway.api, device, 'qr');
    return { gateway, device };
  }

  it('waits at the owner whose actor for the device is not started yet: the scan pairs once it is (202)', async () => {
    const { gateway, device } = await deviceShowingQr('takeover-scan');
    // Where a process that just took the lease stands before its actor loads (src/cluster/cluster-wiring.ts,
    // onAcquired): the lease is held here, no actor or connection runs the device yet.
    await gateway.sessions.release(device.id);
    expect(gateway.sessions.state(device.id)).toBeUndefined();
    const scans = vi.spyOn(SandboxEngine.prototype, 'scan');
    const scanned = gateway.api('POST', `/sandbox/devices/${device.id}/scan`, {
      admin: true,
      json: { phone: '4915100009101' },
    });
    // The phone found no connection here once; then the device is started (adopted), as the lease tick does.
    await eventually(() => scans.mock.results.length > 0, 'the first try of the scan');
    expect(await scans.mock.results[0].value).toBe('no_qr');
    await gateway.sessions.adopt(device.id);
    const answer = await scanned;
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 202, body: { state: 'connecting' } });
    await waitForState(gateway.api, device, 'online');
  });

  it('answers 503 busy, not 409 "the session is qr", when the owner had no code on show and no state to tell', async () => {
    const { gateway, device } = await deviceShowingQr('moving-scan');
    // The owner's answer as a process gives it whose device was handed on meanwhile (no actor there any more),
    // carried back to this process, where the device is recorded `qr`.
    gateway.calls.carryWith({
      elsewhere: (deviceId) => deviceId === device.id,
      carry: async (_deviceId, call) => ({
        value: call.name === 'sandbox.scan' ? { outcome: 'no_qr' } : { outcome: 'no_code' },
      }),
    });
    const scanned = await gateway.api('POST', `/sandbox/devices/${device.id}/scan`, {
      admin: true,
      json: { phone: '4915100009102' },
    });
    expect({ status: scanned.status, code: scanned.body.code }).toEqual({ status: 503, code: 'busy' });
    expect(scanned.headers.get('retry-after')).toBe('1');
  });

  it('answers 503 busy, not 409 "the session is pairing", for a pairing code entered while nothing tells why no code is on show', async () => {
    const { gateway, device } = await deviceShowingQr('moving-pair');
    const paired = await gateway.api('POST', `/devices/${device.id}/session/pair`, {
      deviceKey: device.key,
      json: { phone: '4915100009103' },
    });
    expect(paired.status).toBe(202);
    await waitForState(gateway.api, device, 'pairing');
    gateway.calls.carryWith({
      elsewhere: (deviceId) => deviceId === device.id,
      carry: async () => ({ value: { outcome: 'no_code' } }),
    });
    const entered = await gateway.api('POST', `/sandbox/devices/${device.id}/pair`, {
      admin: true,
      json: { code: paired.body.pairingCode },
    });
    expect({ status: entered.status, code: entered.body.code }).toEqual({ status: 503, code: 'busy' });
  });
});
