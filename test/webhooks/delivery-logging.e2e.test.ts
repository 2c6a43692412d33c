/**
 * What the gateway logs of failing webhook deliveries: the first failed attempt of a lane's streak at warn (the
 * device, the hook URL with its credentials masked, the answer or the error, the next retry), its retries
 * no more at warn or above, and at info once a delivery succeeds again. A real gateway, a real receiver, the
 * gateway's own pino logger writing to a list.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type Gateway, startGateway } from '../../src/gateway.js';
import { type Api, apiClient, testConfig } from '../support/gateway.js';
import { appendReceived } from './support/events.js';
import { TestReceiver } from './support/receiver.js';

interface LogLine {
  level: number;
  msg: string;
  deviceId?: string;
  url?: string;
  status?: number;
  error?: string;
  attempt?: number;
  outcome?: string;
  nextAttemptAt?: string;
}

const WARN = 40;
const INFO = 30;

describe('logging failed webhook deliveries', () => {
  let gateway: Gateway | undefined;
  let receiver: TestReceiver | undefined;
  afterEach(async () => {
    await gateway?.close();
    await receiver?.close();
    gateway = receiver = undefined;
  });

  const start = async () => {
    const lines: LogLine[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as LogLine) });
    gateway = await startGateway(
      testConfig({
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms,50ms,50ms',
        WEBHOOK_RETRY_JITTER: '0',
      }),
      { logger, validateResponses: true },
    );
    receiver = await TestReceiver.start();
    return { api: apiClient(gateway.url), lines };
  };

  const hooked = async (api: Api, id: string, url: string) => {
    const created = await api('POST', '/devices', { admin: true, json: { id, name: id } });
    expect(created.status).toBe(201);
    const put = await api('PUT', `/devices/${id}/hooks`, {
      deviceKey: (created.body as { deviceKey: string }).deviceKey,
      json: { url, events: ['message.received'] },
    });
    expect(put.status).toBe(200);
  };

  /** The lines about this device's webhook deliveries at warn or above, and those at info. */
  const aboutDevice = (lines: LogLine[], deviceId: string) => ({
    warnings: lines.filter((l) => l.deviceId === deviceId && l.level >= WARN),
    infos: lines.filter((l) => l.deviceId === deviceId && l.level === INFO && /webhook/.test(l.msg)),
  });

  it('warns once per failing streak, not per retry, with the URL masked, and says when the lane recovers', async () => {
    const { api, lines } = await start();
    const url = `http://hook-user:hook-password@127.0.0.1:${receiver!.port}/hooks?token=s3cret-token&site=shop`;
    await hooked(api, 'flaky', url);
    // The first four requests are refused (the first delivery's first attempt and three retries), then all taken.
    let answered = 0;
    receiver!.respond = () => (++answered <= 4 ? { status: 503 } : { status: 200 });
    await appendReceived(gateway!.store, 'flaky', 2);
    await receiver!.waitUntil(() => answered >= 6, 15_000, 'two deliveries, after four refusals');

    const first = aboutDevice(lines, 'flaky');
    expect(first.warnings).toHaveLength(1);
    const [warning] = first.warnings;
    expect(warning).toMatchObject({
      level: WARN,
      url: `http://***:***@127.0.0.1:${receiver!.port}/hooks?token=***&site=shop`,
      status: 503,
      error: 'answered 503',
      attempt: 1,
      outcome: 'retrying',
      nextAttemptAt: expect.any(String),
    });
    expect(Date.parse(warning.nextAttemptAt!)).toBeGreaterThan(0);
    // The retries of the streak are logged below warn only.
    expect(lines.filter((l) => l.deviceId === 'flaky' && /failed again/.test(l.msg))).toHaveLength(3);
    await expect.poll(() => aboutDevice(lines, 'flaky').infos.length).toBe(1);
    expect(aboutDevice(lines, 'flaky').infos[0].msg).toMatch(/succeed again/);
    expect(JSON.stringify(lines)).not.toMatch(/s3cret-token|hook-password/);

    // A later failure is a new streak: warned again, once.
    answered = 0;
    receiver!.respond = () => (++answered <= 2 ? { status: 500 } : { status: 200 });
    await appendReceived(gateway!.store, 'flaky', 1, 3);
    await receiver!.waitUntil(() => answered >= 3, 15_000, 'the third delivery, after two refusals');
    await expect.poll(() => aboutDevice(lines, 'flaky').infos.length).toBe(2);
    const second = aboutDevice(lines, 'flaky');
    expect(second.warnings).toHaveLength(2);
    expect(second.warnings[1]).toMatchObject({ status: 500, attempt: 1, outcome: 'retrying' });
  });

  it('warns of an unreachable receiver with the error, once, while its deliveries are retried', async () => {
    const { api, lines } = await start();
    const port = receiver!.port;
    await receiver!.close();
    receiver = undefined;
    await hooked(api, 'gone', `http://127.0.0.1:${port}/hooks`);
    await appendReceived(gateway!.store, 'gone', 1);
    await expect
      .poll(() => lines.filter((l) => l.deviceId === 'gone' && /failed again/.test(l.msg)).length)
      .toBeGreaterThanOrEqual(3);
    const { warnings } = aboutDevice(lines, 'gone');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ url: `http://127.0.0.1:${port}/hooks`, error: expect.any(String) });
    expect(warnings[0].status).toBeUndefined();
  });
});
