/**
 * The session watchdog end to end, with an injected clock: a deafened sandbox device (online, hearing nothing)
 * that sends goes `silent` within WATCHDOG_SILENCE + 1 s, with its `session.health` event and the gauge; it is
 * rebooted once for that silence (WATCHDOG_REBOOT), not again while it stays silent; and it is `ok` again once
 * something arrives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionStream } from '../../src/sessions/session-events.js';
import { healthStream } from '../../src/watchdog/health-events.js';
import { type Api, startTestGateway } from '../support/gateway.js';
import { eventually } from '../support/eventually.js';
import { TestClock } from '../support/test-clock.js';
import {
  type SandboxDevice,
  createDevice,
  goOnline,
  send,
  stateOf,
  statuses,
} from '../outbox/support/sandbox-devices.js';

const SILENCE_MS = 60_000;

describe('the session watchdog', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let device: SandboxDevice;
  const clock = new TestClock({ running: true });

  beforeAll(async () => {
    gateway = await startTestGateway(
      {
        DEFAULT_ENGINE: 'sandbox',
        OUTBOX_SPACING: '0',
        WATCHDOG_SILENCE: '1m',
        WATCHDOG_REBOOT: 'true',
        SESSION_RECONNECT_BASE_DELAY_MS: '0',
      },
      { clock },
    );
    api = gateway.api;
    device = await createDevice(api, 'deaf', '4915100000950');
    await goOnline(api, device);
  });
  afterAll(async () => {
    await gateway.close();
  });

  const health = async () =>
    (await api('GET', `/devices/${device.id}/session/state`, { deviceKey: device.key })).body.health as string;
  const reboots = async () =>
    (await gateway.store.readStream(sessionStream(device.id))).filter(
      (e) => (e.data as { reason?: string }).reason === 'rebooted',
    ).length;
  const sentCount = async () => (await statuses(gateway.store, device.id)).filter((s) => s.status === 'sent').length;
  const metric = async (name: string) => {
    const text = (await api('GET', '/metrics', { admin: true })).body as string;
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  };

  it('is ok while the session hears what it sends', async () => {
    expect(await health()).toBe('ok');
    await send(api, device, '4915100000951', 'hello');
    await eventually(
      async () => ((await statuses(gateway.store, device.id)).some((s) => s.status === 'read') ? true : undefined),
      'read',
    );
    // The watchdog heard the receipts: it waits for nothing, and a silence later is no reason to worry.
    await eventually(() => (gateway.watchdog.waitingSince(device.id) === undefined ? true : undefined), 'heard');
    await clock.advance(SILENCE_MS + 1_000);
    await gateway.watchdog.check();
    expect(await health()).toBe('ok');
  });

  it('reports a deafened session silent within WATCHDOG_SILENCE + 1 s of a send, and reboots it once', async () => {
    const deafened = await api('POST', `/sandbox/devices/${device.id}/deafen`, { admin: true, json: { on: true } });
    expect(deafened.status).toBe(200);
    expect(deafened.body).toEqual({ deaf: true });
    const rebootsBefore = await reboots();
    const before = await sentCount();
    await send(api, device, '4915100000951', 'anyone there?');
    await eventually(async () => ((await sentCount()) > before ? true : undefined), 'sent');
    const since = await eventually(() => gateway.watchdog.waitingSince(device.id), 'the watchdog saw the send');
    await clock.advance(Math.max(0, since - clock.now()));
    // Connected and online all along.
    expect(await stateOf(api, device)).toBe('online');
    await clock.advance(SILENCE_MS - 2_000);
    expect(await health()).toBe('ok');
    await clock.advance(3_000);
    await eventually(async () => ((await health()) === 'silent' ? true : undefined), 'silent');
    const [changed] = (await gateway.store.readStream(healthStream(device.id))).map((e) => e.data);
    expect(changed).toMatchObject({ deviceId: device.id, health: 'silent', previousHealth: 'ok', rebooting: true });
    expect(await metric('dmg_sessions_silent')).toBe(1);
    // Rebooted once: it comes back online, still deaf.
    await eventually(async () => ((await reboots()) > rebootsBefore ? true : undefined), 'rebooted');
    await eventually(async () => ((await stateOf(api, device)) === 'online' ? true : undefined), 'online again');
    expect(await metric('dmg_watchdog_reboots_total')).toBe(1);
    const afterReboot = await reboots();
    // Still deaf, still sending: silent, and no second reboot for the same silence.
    await send(api, device, '4915100000951', 'still there?');
    await clock.advance(3 * SILENCE_MS);
    await eventually(async () => ((await sentCount()) > before + 1 ? true : undefined), 'sent again');
    await clock.advance(2 * SILENCE_MS);
    expect(await health()).toBe('silent');
    expect(await reboots()).toBe(afterReboot);
    expect(await metric('dmg_watchdog_reboots_total')).toBe(1);
  });

  it('is ok again once something arrives', async () => {
    await api('POST', `/sandbox/devices/${device.id}/deafen`, { admin: true, json: { on: false } });
    const inbound = await api('POST', `/sandbox/devices/${device.id}/inbound`, {
      admin: true,
      json: { from: '4915100000951', body: 'here!' },
    });
    expect(inbound.status).toBeLessThan(300);
    await eventually(async () => ((await health()) === 'ok' ? true : undefined), 'ok again');
    const events = (await gateway.store.readStream(healthStream(device.id))).map((e) => e.data);
    expect(events.at(-1)).toMatchObject({ health: 'ok', previousHealth: 'silent', reason: 'heard' });
    expect(await metric('dmg_sessions_silent')).toBe(0);
  });
});
