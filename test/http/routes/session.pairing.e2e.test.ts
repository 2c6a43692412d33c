/**
 * Linking by pairing code with sandbox devices: POST /session/pair answers a code and the state
 * `pairing`; the phone enters it (POST /sandbox/devices/:id/pair) and the session goes online with the
 * number asked for; wrong codes, linked sessions and bad numbers are refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../../support/gateway.js';
import { bringOnline, createSandboxDevice, sessionChanges, waitForState } from '../../support/sessions.js';

describe('pairing by code (sandbox)', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway?.close());

  it('answers a code and `pairing`; the right code links the number asked for', async () => {
    const { api } = gateway;
    const device = await createSandboxDevice(api, 'pair-1');
    const paired = await api('POST', `/devices/${device.id}/session/pair`, {
      deviceKey: device.key,
      json: { phone: '4915100007777' },
    });
    expect(paired.status).toBe(202);
    expect(paired.body).toEqual({
      state: 'pairing',
      pairingCode: expect.stringMatching(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/),
      expiresAt: expect.any(String),
    });
    expect((await api('GET', `/devices/${device.id}/session/state`, { deviceKey: device.key })).body.state).toBe(
      'pairing',
    );
    // No QR while pairing by code.
    expect((await api('GET', `/devices/${device.id}/session/qr`, { deviceKey: device.key })).status).toBe(409);

    const wrong = await api('POST', `/sandbox/devices/${device.id}/pair`, { admin: true, json: { code: 'AAAA-AAAA' } });
    expect(wrong.status).toBe(422);
    expect(wrong.body.code).toBe('invalid_pairing_code');
    expect((await api('GET', `/devices/${device.id}/session/state`, { deviceKey: device.key })).body.state).toBe(
      'pairing',
    );

    // Asking again answers the code on show now (renewed).
    const again = await api('POST', `/devices/${device.id}/session/pair`, {
      deviceKey: device.key,
      json: { phone: '4915100007777' },
    });
    expect(again.status).toBe(202);
    const entered = await api('POST', `/sandbox/devices/${device.id}/pair`, {
      admin: true,
      json: { code: again.body.pairingCode.toLowerCase() },
    });
    expect(entered.status).toBe(202);
    const online = await waitForState(api, device, 'online');
    expect(online.phone).toBe('4915100007777');
    const states = (await sessionChanges(gateway.store, device.id)).map((c) => c.state);
    expect(states).toEqual(['connecting', 'qr', 'pairing', 'connecting', 'online']);

    const linked = await api('POST', `/devices/${device.id}/session/pair`, {
      deviceKey: device.key,
      json: { phone: '4915100007777' },
    });
    expect(linked.status).toBe(409);
    expect(linked.body.code).toBe('pairing_unavailable');
    // Credentials persist: close and open needs no code.
    await api('POST', `/devices/${device.id}/session/close`, { deviceKey: device.key });
    await api('POST', `/devices/${device.id}/session/open`, { deviceKey: device.key });
    await waitForState(api, device, 'online');
  });

  it('refuses a code when none is on show, and numbers that cannot be linked', async () => {
    const { api } = gateway;
    const device = await createSandboxDevice(api, 'pair-2');
    const none = await api('POST', `/sandbox/devices/${device.id}/pair`, { admin: true, json: { code: 'ABCD-EFGH' } });
    expect(none.status).toBe(409);
    expect(none.body.code).toBe('pairing_unavailable');
    expect(
      (await api('POST', `/devices/${device.id}/session/pair`, { deviceKey: device.key, json: { phone: '12' } }))
        .status,
    ).toBe(400);
    const unknown = await api('POST', `/devices/${device.id}/session/pair`, {
      deviceKey: device.key,
      json: { phone: '4915100000000' },
    });
    expect(unknown.status).toBe(400);
    // A refused request leaves the session as it was: the one it opened to ask is closed again.
    await waitForState(api, device, 'closed');
    const other = await createSandboxDevice(api, 'pair-3');
    await bringOnline(api, other, '4915100008888');
    expect(
      (
        await api('POST', `/devices/${other.id}/session/pair`, {
          deviceKey: other.key,
          json: { phone: '4915100008888' },
        })
      ).status,
    ).toBe(409);
  });
});
