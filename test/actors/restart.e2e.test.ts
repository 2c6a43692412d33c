import { afterEach, describe, expect, it } from 'vitest';
import { CHILD_GATEWAY_TESTS, type ChildGateway, spawnGateway } from '../support/child-gateway.js';
import { apiClient, startTestGateway } from '../support/gateway.js';
import { tempDir } from '../support/temp-dir.js';
import { bringOnline, createSandboxDevice, sessionChanges, waitForState } from '../support/sessions.js';
import { eventually } from '../support/eventually.js';

describe('sessions across restarts', CHILD_GATEWAY_TESTS, () => {
  let child: ChildGateway | undefined;
  afterEach(async () => {
    await child?.kill().catch(() => undefined);
    child = undefined;
  });

  it('a stopped and started gateway resumes the sessions that were running, and only those', async () => {
    const dataDir = tempDir('dmg-restart-');
    const first = await startTestGateway({ DATA_DIR: dataDir });
    const online = await createSandboxDevice(first.api, 'was-online');
    const showingQr = await createSandboxDevice(first.api, 'was-qr');
    const closed = await createSandboxDevice(first.api, 'was-closed');
    await bringOnline(first.api, online, '4915111111112');
    await first.api('POST', `/devices/${showingQr.id}/session/open`, { deviceKey: showingQr.key });
    await waitForState(first.api, showingQr, 'qr');
    await bringOnline(first.api, closed, '4915111111114');
    await first.api('POST', `/devices/${closed.id}/session/close`, { deviceKey: closed.key });
    await first.close();

    const second = await startTestGateway({ DATA_DIR: dataDir });
    try {
      // Online again with the stored credentials: no code, no scan.
      const state = await waitForState(second.api, online, 'online');
      expect(state.phone).toBe('4915111111112');
      // The read model says online from before the restart at once; the restore is recorded soon after.
      const restored = async () =>
        (await sessionChanges(second.store, online.id)).slice(-2).map((c) => [c.previousState, c.state, c.reason]);
      await eventually(
        async () => (await restored())[1]?.[2] === 'connected' && (await restored())[0]?.[2] === 'restored',
        'the restore recorded',
      );
      expect(await restored()).toEqual([
        ['online', 'connecting', 'restored'],
        ['connecting', 'online', 'connected'],
      ]);
      await waitForState(second.api, showingQr, 'qr');
      expect(
        (await second.api('GET', `/devices/${showingQr.id}/session/qr`, { deviceKey: showingQr.key })).status,
      ).toBe(200);
      expect(
        (await second.api('GET', `/devices/${closed.id}/session/state`, { deviceKey: closed.key })).body.state,
      ).toBe('closed');
      expect(second.sessions.peek(closed.id)).toBeUndefined();
      // A closed session with stored credentials still needs no code after the restart.
      await second.api('POST', `/devices/${closed.id}/session/open`, { deviceKey: closed.key });
      await waitForState(second.api, closed, 'online');
    } finally {
      await second.close();
    }
  });

  it('after kill -9 the restarted gateway brings the online sessions back', async () => {
    const dataDir = tempDir('dmg-restart-kill-');
    child = await spawnGateway(dataDir);
    let api = apiClient(child.url);
    const devices = [];
    for (let i = 0; i < 3; i++) {
      const device = await createSandboxDevice(api, `killed-${i}`);
      await bringOnline(api, device, `49151222222${i}2`);
      devices.push(device);
    }
    await child.kill();

    child = await spawnGateway(dataDir);
    api = apiClient(child.url);
    for (const [i, device] of devices.entries()) {
      expect((await waitForState(api, device, 'online')).phone).toBe(`49151222222${i}2`);
    }
  });
});
