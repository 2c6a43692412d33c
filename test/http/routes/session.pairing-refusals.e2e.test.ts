/**
 * POST /session/pair over HTTP with sandbox devices: a refused request (a linked account, a number that
 * cannot be linked) changes nothing, and asking again while pairing answers the code on show; another
 * number while pairing is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../../support/gateway.js';
import { bringOnline, createSandboxDevice, sessionChanges, waitForState } from '../../support/sessions.js';

describe('pairing by code: refusals change nothing, asking again answers the current code', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway?.close());

  const lastRecorded = async (deviceId: string) => (await sessionChanges(gateway.store, deviceId)).at(-1)?.state;

  it('a closed session with a linked account is refused before it is opened', async () => {
    const { api } = gateway;
    const device = await createSandboxDevice(api, 'pair-linked');
    await bringOnline(api, device, '4915100006666');
    await api('POST', `/devices/${device.id}/session/close`, { deviceKey: device.key });
    const before = await sessionChanges(gateway.store, device.id);
    expect(before.at(-1)?.state).toBe('closed');

    const refused = await api('POST', `/devices/${device.id}/session/pair`, {
      deviceKey: device.key,
      json: { phone: '4915100006666' },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('pairing_unavailable');
    expect(await sessionChanges(gateway.store, device.id)).toEqual(before);
    expect((await api('GET', `/devices/${device.id}/session/state`, { deviceKey: device.key })).body.state).toBe(
      'closed',
    );
  });

  it('a number that cannot be linked leaves a stopped session stopped as it was', async () => {
    const { api } = gateway;
    const closed = await createSandboxDevice(api, 'pair-unknown');
    const unknown = await api('POST', `/devices/${closed.id}/session/pair`, {
      deviceKey: closed.key,
      json: { phone: '4915100000000' },
    });
    expect(unknown.status).toBe(400);
    expect(await lastRecorded(closed.id)).toBe('closed');
    await waitForState(api, closed, 'closed');

    const unlinked = await createSandboxDevice(api, 'pair-unknown-unlinked');
    await bringOnline(api, unlinked, '4915100005555');
    await api('POST', `/devices/${unlinked.id}/session/close`, { deviceKey: unlinked.key, json: { logout: true } });
    expect(await lastRecorded(unlinked.id)).toBe('logged_out');
    expect(
      (
        await api('POST', `/devices/${unlinked.id}/session/pair`, {
          deviceKey: unlinked.key,
          json: { phone: '4915100000000' },
        })
      ).status,
    ).toBe(400);
    expect(await lastRecorded(unlinked.id)).toBe('logged_out');

    // A number that exists still links.
    const paired = await api('POST', `/devices/${closed.id}/session/pair`, {
      deviceKey: closed.key,
      json: { phone: '4915100004444' },
    });
    expect(paired.status).toBe(202);
    expect(
      (
        await api('POST', `/sandbox/devices/${closed.id}/pair`, {
          admin: true,
          json: { code: paired.body.pairingCode },
        })
      ).status,
    ).toBe(202);
    expect((await waitForState(api, closed, 'online')).phone).toBe('4915100004444');
  });

  it('asking again for the same number answers the code on show; another number is refused', async () => {
    const { api } = gateway;
    const device = await createSandboxDevice(api, 'pair-again');
    const first = await api('POST', `/devices/${device.id}/session/pair`, {
      deviceKey: device.key,
      json: { phone: '4915100003333' },
    });
    expect(first.status).toBe(202);
    const again = await api('POST', `/devices/${device.id}/session/pair`, {
      deviceKey: device.key,
      json: { phone: '4915100003333' },
    });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);

    const other = await api('POST', `/devices/${device.id}/session/pair`, {
      deviceKey: device.key,
      json: { phone: '4915100002222' },
    });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: 'pairing_unavailable', reason: 'pairing_another_number' });
    expect(other.body.detail).toContain('4915100003333');

    // The first code still links the first number.
    expect(
      (await api('POST', `/sandbox/devices/${device.id}/pair`, { admin: true, json: { code: first.body.pairingCode } }))
        .status,
    ).toBe(202);
    expect((await waitForState(api, device, 'online')).phone).toBe('4915100003333');
    expect((await sessionChanges(gateway.store, device.id)).map((c) => c.state)).toEqual([
      'connecting',
      'qr',
      'pairing',
      'connecting',
      'online',
    ]);
  });
});
