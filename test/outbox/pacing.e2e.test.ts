/**
 * Pacing end to end, on a sandbox device with an injected clock: sends over the day's cap stay queued with
 * `deferredUntil` and go, in order, once the day rolls over at midnight in the device's time zone; the unanswered
 * limit refuses at the API until the number writes; settings are checked (an unknown time zone is a 400).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, startTestGateway } from '../support/gateway.js';
import { eventually } from '../support/eventually.js';
import { TestClock } from '../support/test-clock.js';
import { type SandboxDevice, createDevice, goOnline, outboxList, send, statuses } from './support/sandbox-devices.js';

// 23:50 in Berlin (UTC+1 in early March): midnight there is ten minutes away.
const START = Date.parse('2026-03-02T22:50:00Z');
const MIDNIGHT_BERLIN = '2026-03-02T23:00:00.000Z';
const PEER = '4915100000001';

describe('pacing', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let device: SandboxDevice;
  const clock = new TestClock({ running: true, start: START });

  beforeAll(async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox', OUTBOX_SPACING: '0' }, { clock });
    api = gateway.api;
    device = await createDevice(api, 'paced', '4915100000900');
    await goOnline(api, device);
  });
  afterAll(async () => {
    await gateway.close();
  });

  const patch = (pacing: Record<string, unknown>) =>
    api('PATCH', `/devices/${device.id}/settings`, { deviceKey: device.key, json: { pacing } });

  it('refuses an unknown time zone and changes nothing; shows every part with its default', async () => {
    const bad = await patch({ timezone: 'Mars/Olympus_Mons' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_request');
    const settings = await api('GET', `/devices/${device.id}/settings`, { deviceKey: device.key });
    expect(settings.body.pacing).toEqual({
      timezone: 'UTC',
      warmup: null,
      dailyCap: null,
      quietHours: null,
      unansweredLimit: null,
      typing: false,
    });
    expect((await patch({ quietHours: { from: '25:00', to: '08:00' } })).status).toBe(400);
  });

  it('keeps sends over the cap queued with deferredUntil, and sends them in order after midnight in the time zone', async () => {
    const set = await patch({ timezone: 'Europe/Berlin', dailyCap: 2 });
    expect(set.status).toBe(200);
    expect(set.body.pacing).toMatchObject({ timezone: 'Europe/Berlin', dailyCap: 2 });
    const sent = [];
    for (let i = 1; i <= 4; i += 1) sent.push(await send(api, device, PEER, `m${i}`));
    const sentIds = async () =>
      (await statuses(gateway.store, device.id)).filter((s) => s.status === 'sent').map((s) => s.waMessageId);
    await eventually(async () => ((await sentIds()).length === 2 ? true : undefined), 'two sent');
    const waiting = await eventually(async () => {
      const items = await outboxList(api, device);
      return items.length === 2 && items.every((item) => 'deferredUntil' in item) ? items : undefined;
    }, 'two deferred');
    expect(waiting.map((item) => item.waMessageId)).toEqual([sent[2].waMessageId, sent[3].waMessageId]);
    expect(waiting[0]).toMatchObject({ status: 'queued', deferredUntil: MIDNIGHT_BERLIN });
    const pacing = await api('GET', `/devices/${device.id}/pacing`, { deviceKey: device.key });
    expect(pacing.body).toEqual({ today: 2, cap: 2, nextWindowAt: MIDNIGHT_BERLIN, deferred: 2 });
    // The message view says the same of a held send, and nothing of one that went.
    const message = (id: string) => api('GET', `/devices/${device.id}/messages/${id}`, { deviceKey: device.key });
    expect((await message(sent[2].waMessageId)).body).toMatchObject({
      status: 'queued',
      deferredUntil: MIDNIGHT_BERLIN,
    });
    expect((await message(sent[0].waMessageId)).body).not.toHaveProperty('deferredUntil');
    // Still waiting a little before midnight (the drainer sleeps on the clock, not on a timer of its own).
    await clock.advance(Date.parse(MIDNIGHT_BERLIN) - clock.now() - 2_000);
    expect(await sentIds()).toHaveLength(2);
    // Past midnight in Berlin the cap renews: both go, in the order they were queued.
    await clock.advance(3_000);
    await eventually(async () => ((await sentIds()).length === 4 ? true : undefined), 'all sent');
    expect(await sentIds()).toEqual(sent.map((s) => s.waMessageId));
    expect((await message(sent[2].waMessageId)).body).not.toHaveProperty('deferredUntil');
    await eventually(async () => ((await outboxList(api, device)).length === 0 ? true : undefined), 'outbox empty');
    const after = await api('GET', `/devices/${device.id}/pacing`, { deviceKey: device.key });
    // The new day's two are used up as well: the next window is the following midnight.
    expect(after.body).toEqual({ today: 2, cap: 2, nextWindowAt: '2026-03-03T23:00:00.000Z', deferred: 0 });
    // A cap lifted (null) lets the next ones go at once.
    expect((await patch({ dailyCap: null })).body.pacing.dailyCap).toBeNull();
  });

  it('with typing, shows typing for 40 ms a character (1 to 8 s) before the text, on the clock', async () => {
    await patch({ typing: true, dailyCap: null, unansweredLimit: null });
    const sentIds = async () =>
      (await statuses(gateway.store, device.id)).filter((s) => s.status === 'sent').map((s) => s.waMessageId);
    const before = (await sentIds()).length;
    // 50 characters: 2 s of typing.
    const typed = await send(api, device, PEER, 'x'.repeat(50));
    await eventually(
      async () => ((await outboxList(api, device)).some((item) => item.status === 'sending') ? true : undefined),
      'typing (the try started)',
    );
    await clock.advance(1_500);
    expect(await sentIds()).toHaveLength(before);
    await clock.advance(600);
    await eventually(
      async () => ((await sentIds()).includes(typed.waMessageId) ? true : undefined),
      'sent after typing',
    );
    await patch({ typing: false });
  });

  it('refuses the send over the unanswered limit with 409 recipient_unresponsive until the number writes', async () => {
    await patch({ unansweredLimit: 1 });
    const stranger = '4915100000777';
    await send(api, device, stranger, 'hello');
    const refused = await api('POST', `/devices/${device.id}/send/text`, {
      deviceKey: device.key,
      json: { to: stranger, text: 'hello again' },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('recipient_unresponsive');
    const before = (await statuses(gateway.store, device.id)).length;
    const inbound = await api('POST', `/sandbox/devices/${device.id}/inbound`, {
      admin: true,
      json: { from: stranger, body: 'who is this?' },
    });
    expect(inbound.status).toBeLessThan(300);
    await eventually(async () => {
      const answer = await api('POST', `/devices/${device.id}/send/text`, {
        deviceKey: device.key,
        json: { to: stranger, text: 'your shop' },
      });
      return answer.status === 202 ? true : undefined;
    }, 'the reply is accepted');
    expect((await statuses(gateway.store, device.id)).length).toBeGreaterThanOrEqual(before);
  });
  it('holds the unanswered limit against concurrent sends: the ones over it are refused', async () => {
    await patch({ unansweredLimit: 2 });
    const stranger = '4915100000778';
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api('POST', `/devices/${device.id}/send/text`, {
          deviceKey: device.key,
          json: { to: stranger, text: `hi ${i}` },
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([202, 202, 409, 409, 409, 409]);
    expect(answers.filter((a) => a.status === 409).every((a) => a.body.code === 'recipient_unresponsive')).toBe(true);
  });
});
