/**
 * The session watchdog on a real SQLite log, without a gateway: what it watches (only devices waiting after a
 * send), and the silences it ends, known from the health events of the log it follows (and the read model's
 * silent devices at its start), not looked up for each event heard.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { healthStream } from '../../src/watchdog/health-events.js';
import { Watchdog } from '../../src/watchdog/watchdog.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp-dir.js';
import { TestClock } from '../support/test-clock.js';
import { rmSync } from 'node:fs';

const received = (deviceId: string) => ({
  type: 'MessageReceived',
  data: { deviceId, chatId: '4915100000001@s.whatsapp.net', waMessageId: `W-${deviceId}`, body: 'hi' },
});
const sent = (deviceId: string) => ({
  type: 'MessageStatusChanged',
  data: { deviceId, waMessageId: `S-${deviceId}`, status: 'sent', recipient: '4915100000001', timestamp: 0 },
});

describe('the session watchdog', () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  const silence = (deviceId: string) => ({
    type: 'SessionHealthChanged',
    data: { deviceId, health: 'silent', previousHealth: 'ok', reason: 'silent' },
  });

  /**
   * A watchdog that starts after the devices in `silentBefore` were recorded silent, and with those in
   * `waitingBefore` waiting after a send (as the read model says).
   */
  async function watchdogOn(silentBefore: string[] = [], waitingBefore: string[] = []) {
    const dir = tempDir('dmg-watchdog-');
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    let after = 0;
    for (const deviceId of silentBefore)
      after = (await store.append(healthStream(deviceId), [silence(deviceId)])).position;
    const clock = new TestClock();
    const watchdog = new Watchdog({
      store,
      log: pino({ level: 'silent' }),
      clock,
      settings: { silenceMs: 60_000, reboot: false },
      sessions: { state: () => 'online', reboot: async () => undefined },
      silentAtStart: () => silentBefore,
      waitingAtStart: () => waitingBefore,
    });
    watchdog.start(after);
    cleanup = async () => {
      await watchdog.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    };
    return { store, watchdog, clock };
  }

  it('watches only the devices waiting after a send, not every device that hears something', async () => {
    const { store, watchdog } = await watchdogOn();
    for (let i = 0; i < 50; i++) await store.append(`inbox-d${i}`, [received(`d${i}`)]);
    await store.append('outbox-d0', [sent('d0')]);
    await eventually(() => watchdog.waitingSince('d0') !== undefined, 'd0 waiting');
    expect(watchdog.watched).toBe(1);
    await store.append('inbox-d0', [received('d0')]);
    await eventually(() => watchdog.waitingSince('d0') === undefined, 'd0 heard');
    expect(watchdog.watched).toBe(0);
  });

  it('takes up the waits of before its start (a restart): judged silent once WATCHDOG_SILENCE passed since', async () => {
    const { store, watchdog, clock } = await watchdogOn([], ['restarted']);
    const start = clock.now();
    expect(watchdog.waitingSince('restarted')).toBe(start);
    await clock.advance(59_999);
    await watchdog.check();
    expect(await store.readStream(healthStream('restarted'))).toEqual([]);
    // The watchdog's own tick (its timer on the injected clock) judges it.
    await clock.advance(1);
    await eventually(async () => (await store.readStream(healthStream('restarted'))).length === 1, 'judged');
    const [judged] = await store.readStream(healthStream('restarted'));
    expect(judged.data).toMatchObject({ health: 'silent', silentSince: new Date(start).toISOString() });
  });

  it('ends a silence recorded before it started, or by another process, once the device is heard', async () => {
    const { store } = await watchdogOn(['old']);
    await store.append('inbox-old', [received('old')]);
    await store.append(healthStream('elsewhere'), [silence('elsewhere')]);
    await store.append('inbox-elsewhere', [received('elsewhere')]);
    const healthOf = async (deviceId: string) =>
      (await store.readStream(healthStream(deviceId))).map((e) => (e.data as { health: string }).health);
    await eventually(async () => (await healthOf('old')).join() === 'silent,ok', 'old ok');
    await eventually(async () => (await healthOf('elsewhere')).join() === 'silent,ok', 'elsewhere ok');
  });
});
