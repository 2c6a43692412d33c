import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Api, startTestGateway } from '../../support/gateway.js';
import { parsePng } from '../../support/png.js';
import {
  type TestDevice,
  bringOnline,
  createSandboxDevice,
  sessionChanges,
  sessionStates,
  waitForState,
} from '../../support/sessions.js';
import { eventually } from '../../support/eventually.js';

describe('session lifecycle over HTTP (sandbox engine)', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;

  beforeAll(async () => {
    gateway = await startTestGateway({
      DEFAULT_ENGINE: 'sandbox',
      SESSION_RECONNECT_BASE_DELAY_MS: '20',
      SESSION_RECONNECT_MAX_DELAY_MS: '200',
    });
    api = gateway.api;
  });
  afterAll(() => gateway.close());

  const post = (device: TestDevice, action: string, json?: unknown) =>
    api('POST', `/devices/${device.id}/session/${action}`, {
      deviceKey: device.key,
      ...(json === undefined ? {} : { json }),
    });
  const get = (device: TestDevice, what: string) =>
    api('GET', `/devices/${device.id}/session/${what}`, { deviceKey: device.key });
  const sandbox = (device: TestDevice, action: string, json?: unknown) =>
    api('POST', `/sandbox/devices/${device.id}/${action}`, { admin: true, ...(json === undefined ? {} : { json }) });

  it('open → qr → scan → online → disconnect → reconnecting → online → logout → logged_out → open → qr', async () => {
    const device = await createSandboxDevice(api, 'life-1');
    expect((await get(device, 'state')).body.state).toBe('closed');

    const opened = await post(device, 'open');
    expect(opened.status).toBe(202);
    expect(opened.body).toEqual({ state: 'connecting' });
    // Read your writes: the device list already says so.
    expect(['connecting', 'qr']).toContain(
      (await api('GET', `/devices/${device.id}`, { admin: true })).body.session.state,
    );

    await waitForState(api, device, 'qr');
    const qr = await get(device, 'qr');
    expect(qr.status).toBe(200);
    expect(qr.body.qr).toMatch(/^sandbox:.{16,}$/);
    expect(Date.parse(qr.body.expiresAt)).toBeGreaterThan(Date.now());

    const scanned = await sandbox(device, 'scan', { phone: '4915112345678' });
    expect(scanned.status).toBe(202);
    // The answer comes once the device reacted, and the state is readable at once.
    expect(scanned.body).toEqual({ state: 'connecting' });
    expect(['connecting', 'online']).toContain((await get(device, 'state')).body.state);
    const online = await waitForState(api, device, 'online');
    expect(online.phone).toBe('4915112345678');
    const me = await get(device, 'me');
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ phone: '4915112345678', jid: '4915112345678@s.whatsapp.net' });
    expect(gateway.sessions.connection(device.id)).toBeDefined();

    const dropped = await sandbox(device, 'disconnect');
    expect(dropped.status).toBe(202);
    expect(dropped.body).toEqual({ state: 'reconnecting' });
    // The reconnect is quick here (20 ms base delay): the stream shows what polling might miss.
    await eventually(
      async () =>
        (await sessionStates(gateway.store, device.id)).filter((s) => s === 'online').length === 2 ? true : undefined,
      'second online',
    );

    const unlinked = await sandbox(device, 'logout');
    expect(unlinked.status).toBe(202);
    expect(unlinked.body).toEqual({ state: 'logged_out' });
    const loggedOut = await waitForState(api, device, 'logged_out');
    expect(loggedOut.phone).toBeUndefined();
    expect((await get(device, 'me')).status).toBe(409);

    expect((await post(device, 'open')).status).toBe(202);
    await waitForState(api, device, 'qr');

    const changes = await sessionChanges(gateway.store, device.id);
    expect(changes.map((c) => [c.previousState, c.state, c.reason])).toEqual([
      ['closed', 'connecting', 'opened'],
      ['connecting', 'qr', 'qr_issued'],
      ['qr', 'connecting', 'restart_required'],
      ['connecting', 'online', 'connected'],
      ['online', 'reconnecting', 'connection_lost'],
      ['reconnecting', 'online', 'connected'],
      ['online', 'logged_out', 'logged_out'],
      ['logged_out', 'connecting', 'opened'],
      ['connecting', 'qr', 'qr_issued'],
    ]);
    expect(changes.every((c) => c.deviceId === device.id)).toBe(true);
    expect(changes[3].phone).toBe('4915112345678');
    expect(changes[6].phone).toBeUndefined();
  });

  it('close keeps the credentials: a later open goes online without a QR code', async () => {
    const device = await createSandboxDevice(api, 'life-close');
    // Observers (the outbox) hear every change, and find the connection usable when told `online`.
    const heard: Array<[string, boolean]> = [];
    const stop = gateway.sessions.onStateChange((deviceId, state) => {
      if (deviceId === device.id) heard.push([state, gateway.sessions.connection(deviceId) !== undefined]);
    });
    await bringOnline(api, device, '4915100000001');
    const closed = await post(device, 'close');
    expect(closed.status).toBe(200);
    expect(closed.body).toEqual({ state: 'closed' });
    expect((await get(device, 'state')).body).toMatchObject({ state: 'closed', phone: '4915100000001' });
    expect(gateway.sessions.connection(device.id)).toBeUndefined();
    // Still linked: `me` names the account (GET /session/me in /openapi.json: "once one is").
    expect((await get(device, 'me')).body).toEqual({ phone: '4915100000001', jid: '4915100000001@s.whatsapp.net' });

    expect((await post(device, 'open')).status).toBe(202);
    await waitForState(api, device, 'online');
    const states = await sessionStates(gateway.store, device.id);
    expect(states.slice(-3)).toEqual(['closed', 'connecting', 'online']);
    stop();
    expect(heard).toEqual([
      ['connecting', false],
      ['qr', false],
      ['connecting', false],
      ['online', true],
      ['closed', false],
      ['connecting', false],
      ['online', true],
    ]);
  });

  it('close with logout unlinks: the next open shows a QR code', async () => {
    const device = await createSandboxDevice(api, 'life-logout');
    await bringOnline(api, device, '4915100000002');
    const closed = await post(device, 'close', { logout: true });
    expect(closed.body).toEqual({ state: 'logged_out' });
    expect((await get(device, 'state')).body.phone).toBeUndefined();
    expect((await get(device, 'me')).body).toMatchObject({ status: 409, code: 'session_not_online' });
    await post(device, 'open');
    await waitForState(api, device, 'qr');
  });

  it('reboot closes and opens again with the credentials kept', async () => {
    const device = await createSandboxDevice(api, 'life-reboot');
    await bringOnline(api, device, '4915100000003');
    const rebooted = await post(device, 'reboot');
    expect(rebooted.status).toBe(202);
    expect(rebooted.body).toEqual({ state: 'connecting' });
    await waitForState(api, device, 'online');
    expect((await sessionChanges(gateway.store, device.id)).slice(-2).map((c) => [c.state, c.reason])).toEqual([
      ['connecting', 'rebooted'],
      ['online', 'connected'],
    ]);
  });

  it('the sandbox phone can unlink a device that is not connected; its next open is told', async () => {
    const device = await createSandboxDevice(api, 'life-offline-unlink');
    await bringOnline(api, device, '4915100000004');
    await post(device, 'close');
    const unlinked = await sandbox(device, 'logout');
    expect(unlinked.status).toBe(202);
    expect(unlinked.body).toEqual({ state: 'closed' }); // told at its next connection
    expect((await sandbox(device, 'logout')).status).toBe(409); // nothing linked any more
    await post(device, 'open');
    await waitForState(api, device, 'logged_out');
    await post(device, 'open');
    await waitForState(api, device, 'qr');
  });

  it('qr.png is a real PNG of the code, not cached', async () => {
    const device = await createSandboxDevice(api, 'life-png');
    await post(device, 'open');
    await waitForState(api, device, 'qr');
    const response = await fetch(`${gateway.url}/devices/${device.id}/session/qr.png`, {
      headers: { 'x-device-key': device.key },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(response.headers.get('cache-control')).toBe('no-store');
    const { width, height } = parsePng(Buffer.from(await response.arrayBuffer()));
    expect(width).toBeGreaterThanOrEqual(100);
    expect(height).toBe(width);
  });

  describe('commands in the wrong state', () => {
    let device: TestDevice;
    beforeAll(async () => {
      device = await createSandboxDevice(api, 'wrong-state');
    });

    it('closed: qr, qr.png and me are 409 with the state in detail; close changes nothing', async () => {
      for (const what of ['qr', 'qr.png']) {
        const answer = await get(device, what);
        expect(answer.status).toBe(409);
        expect(answer.headers.get('content-type')).toContain('application/problem+json');
        expect(answer.body).toMatchObject({ code: 'qr_unavailable' });
        expect(answer.body.detail).toContain('closed');
      }
      const me = await get(device, 'me');
      expect(me.status).toBe(409);
      expect(me.body.code).toBe('session_not_online');
      expect((await post(device, 'close')).body).toEqual({ state: 'closed' });
      expect(await sessionStates(gateway.store, device.id)).toEqual([]);
    });

    it('the sandbox refuses what the phone cannot do in that state', async () => {
      const scan = await sandbox(device, 'scan', { phone: '4915112340001' });
      expect(scan.status).toBe(409);
      expect(scan.body.code).toBe('qr_unavailable');
      expect(scan.body.detail).toContain('closed');
      const inbound = await sandbox(device, 'inbound', { from: '4915112340001', body: 'hi' });
      expect(inbound.status).toBe(409);
      expect(inbound.body.code).toBe('session_not_online');
      const disconnect = await sandbox(device, 'disconnect');
      expect(disconnect.status).toBe(409);
      expect(disconnect.body.code).toBe('session_not_online');
      const logout = await sandbox(device, 'logout');
      expect(logout.status).toBe(409);
      expect(logout.body.code).toBe('session_not_linked');
    });

    it('open while running is 200 with the current state; qr is 409 once online', async () => {
      await post(device, 'open');
      await waitForState(api, device, 'qr');
      const again = await post(device, 'open');
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ state: 'qr' });
      const badPhone = await sandbox(device, 'scan', { phone: '4915112340000' });
      expect(badPhone.status).toBe(400);
      expect(badPhone.body.code).toBe('invalid_request');
      await sandbox(device, 'scan', { phone: '4915112340002' });
      await waitForState(api, device, 'online');
      const qr = await get(device, 'qr');
      expect(qr.status).toBe(409);
      expect(qr.body.detail).toContain('online');
      expect((await sandbox(device, 'scan', { phone: '4915112340002' })).status).toBe(409);
      expect((await post(device, 'open')).status).toBe(200);
    });

    it("no code where the device runs: 503 busy while it moves or its state is qr, else 409 in the owner's words", async () => {
      // What the owner answers (Supervisor.qr, test/actors/supervisor.qr.test.ts), for a device recorded `online` here.
      const answers = [{ moving: true }, { state: 'qr' as const }, { state: 'connecting' as const }];
      const qr = vi.spyOn(gateway.sessions, 'qr');
      try {
        for (const answer of answers) qr.mockResolvedValueOnce(answer).mockResolvedValueOnce(answer);
        for (const what of ['qr', 'qr.png']) {
          const moving = await get(device, what);
          expect({ status: moving.status, code: moving.body.code }).toEqual({ status: 503, code: 'busy' });
          expect(moving.headers.get('retry-after')).toBe('1');
        }
        for (const what of ['qr', 'qr.png']) expect((await get(device, what)).status).toBe(503);
        for (const what of ['qr', 'qr.png']) {
          const connecting = await get(device, what);
          expect({ status: connecting.status, code: connecting.body.code }).toEqual({
            status: 409,
            code: 'qr_unavailable',
          });
          expect(connecting.body.detail).toContain('the session is connecting');
        }
      } finally {
        qr.mockRestore();
      }
    });

    it('sandbox routes: 404 for unknown devices, 409 for devices of another engine, admin only', async () => {
      expect((await api('POST', '/sandbox/devices/nope/disconnect', { admin: true })).status).toBe(404);
      const other = await api('POST', '/devices', {
        admin: true,
        json: { id: 'a-baileys-device', name: 'b', engine: 'baileys' },
      });
      const notSandbox = await api('POST', '/sandbox/devices/a-baileys-device/scan', {
        admin: true,
        json: { phone: '4915112340003' },
      });
      expect(notSandbox.status).toBe(409);
      expect(notSandbox.body.code).toBe('not_sandbox_device');
      expect((await api('POST', `/sandbox/devices/${device.id}/disconnect`, { deviceKey: device.key })).status).toBe(
        403,
      );
      expect(
        (await api('POST', '/sandbox/devices/a-baileys-device/logout', { deviceKey: other.body.deviceKey })).status,
      ).toBe(403);
      expect((await api('POST', `/devices/nope/session/open`, { admin: true })).status).toBe(404);
    });

    it('bad bodies are 400', async () => {
      expect((await post(device, 'close', { logout: 'yes' })).status).toBe(400);
      expect((await post(device, 'close', { other: true })).status).toBe(400);
      expect((await sandbox(device, 'scan', { phone: '+49 151' })).status).toBe(400);
      expect((await sandbox(device, 'inbound', { from: '4915112340001', type: 'image', body: 'x' })).status).toBe(400);
      expect((await sandbox(device, 'inbound', { from: '4915112340001' })).status).toBe(400);
    });
  });

  it('deleting a device logs its session out and wipes its credentials', async () => {
    const device = await createSandboxDevice(api, 'life-delete');
    await bringOnline(api, device, '4915100000005');
    expect((await api('DELETE', `/devices/${device.id}`, { admin: true })).status).toBe(204);
    const last = (await sessionChanges(gateway.store, device.id)).at(-1)!;
    expect(last).toMatchObject({ state: 'logged_out', previousState: 'online', reason: 'device_deleted' });
    expect(gateway.sessions.peek(device.id)).toBeUndefined();
    expect(await gateway.store.loadSnapshot(`sandbox-credentials-${device.id}`)).toBeNull();
    expect((await get(device, 'state')).status).toBe(401);
  });

  it('documents the session and sandbox routes in /openapi.json', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    for (const path of ['open', 'close', 'reboot', 'state', 'qr', 'qr.png', 'me']) {
      expect(doc.paths[`/devices/{deviceId}/session/${path}`]).toBeDefined();
    }
    for (const path of ['scan', 'inbound', 'disconnect', 'logout']) {
      expect(doc.paths[`/sandbox/devices/{deviceId}/${path}`]?.post?.responses['409']).toBeDefined();
    }
    expect(doc.paths['/devices/{deviceId}/session/qr.png'].get.responses['200'].content['image/png']).toBeDefined();
  });
});

describe('session diagnostics while reconnecting', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;

  beforeAll(async () => {
    // A long reconnect delay: the session stays `reconnecting` while the test reads it.
    gateway = await startTestGateway({
      DEFAULT_ENGINE: 'sandbox',
      SESSION_RECONNECT_BASE_DELAY_MS: '600000',
      SESSION_RECONNECT_MAX_DELAY_MS: '600000',
    });
  });
  afterAll(() => gateway.close());

  it('GET /session/state and GET /devices/:id say why, which try and when the next; close clears them', async () => {
    const api = gateway.api;
    const device = await createSandboxDevice(api, 'diag-1');
    await bringOnline(api, device, '4915112345001');
    const before = Date.now();
    const dropped = await api('POST', `/sandbox/devices/${device.id}/disconnect`, { admin: true });
    expect(dropped.body).toEqual({ state: 'reconnecting' });
    const state = await waitForState(api, device, 'reconnecting');
    expect(state).toMatchObject({
      attempt: 1,
      lastError: { code: 'connection_lost', message: expect.stringContaining('sandbox') },
    });
    const next = Date.parse((state as { nextRetryAt?: string }).nextRetryAt ?? '');
    expect(next).toBeGreaterThan(before + 400_000);
    const shown = await api('GET', `/devices/${device.id}`, { admin: true });
    expect(shown.body.session).toMatchObject({
      state: 'reconnecting',
      attempt: 1,
      lastError: { code: 'connection_lost' },
    });

    await api('POST', `/devices/${device.id}/session/close`, { deviceKey: device.key, json: {} });
    const closed = await api('GET', `/devices/${device.id}/session/state`, { deviceKey: device.key });
    expect(closed.body.state).toBe('closed');
    expect(closed.body).not.toHaveProperty('lastError');
    expect(closed.body).not.toHaveProperty('attempt');
    expect(closed.body).not.toHaveProperty('nextRetryAt');
  });
});
