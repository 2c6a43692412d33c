/**
 * Two gateways in this process on one SQLite file, as two processes would be: session commands asked of the
 * one that does not run a device go to its owner through the store (session-requests-<id>), and a device
 * handed over continues its outbox from what the store holds.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, tempDir } from '../support/gateway.js';
import { eventually } from '../support/eventually.js';
import { bringOnline, createSandboxDevice, waitForState } from '../support/sessions.js';
import { outboxStream } from '../../src/messages/message-events.js';
import { join } from 'node:path';
import pino from 'pino';
import {
  type SessionCommand,
  SessionRequests,
  sessionRequestStream,
  sessionRequestsDecider,
} from '../../src/cluster/session-requests.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

describe('session commands through another process', () => {
  const gateways: TestGateway[] = [];
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.close();
  });

  it('pairs by code through a process that does not run the device: the owner asks its connection for the code', async () => {
    const dataDir = tempDir('dmg-pair-');
    for (const worker of ['1', '2']) {
      gateways.push(
        await startTestGateway({
          DATA_DIR: dataDir,
          GATEWAY_CLUSTER: 'true',
          GATEWAY_WORKER: worker,
          LEASE_TIMEOUT: '2s',
          DEFAULT_ENGINE: 'sandbox',
        }),
      );
    }
    const device = await createSandboxDevice(gateways[0].api, 'pair-elsewhere');
    const owned = async (gateway: TestGateway) =>
      (await gateway.api('GET', '/health', { admin: true })).body.cluster.devicesOwned as number;
    const owner = await eventually(async () => {
      for (const gateway of gateways) if ((await owned(gateway)) === 1) return gateway;
      return undefined;
    }, 'an owner for the device');
    const other = gateways.find((gateway) => gateway !== owner)!;
    // Each process's subscription to the log, judged by its own heartbeats coming back (issue 31).
    await eventually(
      async () => (await other.api('GET', '/health', { admin: true })).body.cluster.subscription?.state === 'live',
      'the subscription shown live',
    );
    expect((await other.api('GET', '/metrics', { admin: true })).body as string).toMatch(
      /^dmg_cluster_subscription_behind_seconds \d/m,
    );

    const unknown = await other.api('POST', `/devices/${device.id}/session/pair`, {
      deviceKey: device.key,
      json: { phone: '4915100000000' },
    });
    expect(unknown.status).toBe(400);
    const paired = await other.api('POST', `/devices/${device.id}/session/pair`, {
      deviceKey: device.key,
      json: { phone: '4915100007777' },
    });
    expect(paired.status).toBe(202);
    expect(paired.body).toEqual({
      state: 'pairing',
      pairingCode: expect.stringMatching(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/),
      expiresAt: expect.any(String),
    });
    expect((await other.api('GET', `/devices/${device.id}/session/state`, { deviceKey: device.key })).body.state).toBe(
      'pairing',
    );
    // The phone enters the code at the owner's (simulated) network.
    const entered = await owner.api('POST', `/sandbox/devices/${device.id}/pair`, {
      admin: true,
      json: { code: paired.body.pairingCode },
    });
    expect(entered.status).toBe(202);
    expect((await waitForState(other.api, device, 'online')).phone).toBe('4915100007777');
    const linked = await other.api('POST', `/devices/${device.id}/session/pair`, {
      deviceKey: device.key,
      json: { phone: '4915100007777' },
    });
    expect(linked.status).toBe(409);
    expect(linked.body.code).toBe('pairing_unavailable');
    expect(await owned(owner)).toBe(1);
    expect(await owned(other)).toBe(0);
  });

  it('a device handed back to a process that ran it before sends what another one queued meanwhile', async () => {
    const dataDir = tempDir('dmg-handover-');
    const env = {
      DATA_DIR: dataDir,
      GATEWAY_CLUSTER: 'true',
      // Both processes share this test's event loop: a stall past a 2 s timeout can make one look silent to the other
      // (which takes its devices) or its own log behind (it takes none); CI timed out once on the handover below
      // (2026-11-29). A stop hands its devices back at once, so the longer timeout costs the test nothing.
      LEASE_TIMEOUT: '10s',
      DEFAULT_ENGINE: 'sandbox',
      OUTBOX_SPACING: '0ms',
      SANDBOX_DELIVERED_DELAY_MS: '20',
      SANDBOX_READ_DELAY_MS: '20',
    };
    const first = await startTestGateway({ ...env, GATEWAY_WORKER: '1' });
    gateways.push(first);
    const devices = await Promise.all(['h1', 'h2', 'h3'].map((id) => createSandboxDevice(first.api, id)));
    await eventually(
      async () => (await first.api('GET', '/health', { admin: true })).body.cluster.devicesOwned === 3,
      'every device run by the first process',
    );
    const statuses = async (deviceId: string) =>
      (await first.store.readStream(outboxStream(deviceId)))
        .filter((e) => e.type === 'MessageStatusChanged')
        .map((e) => e.data as { waMessageId: string; status: string });
    const send = (gateway: TestGateway, device: { id: string; key: string }, text: string) =>
      gateway.api('POST', `/devices/${device.id}/send/text`, {
        deviceKey: device.key,
        json: { to: '4915199999999', text },
      });
    // Each device online on the first process, with a message sent and read: its outbox there has nothing pending.
    for (const [i, device] of devices.entries()) {
      await bringOnline(first.api, device, `491510000111${i}`);
      const answer = await send(first, device, 'before');
      await eventually(
        async () =>
          (await statuses(device.id)).some((s) => s.waMessageId === answer.body.waMessageId && s.status === 'read'),
        'read',
      );
    }
    // A second process takes its share: one device moves to it.
    const second = await startTestGateway({ ...env, GATEWAY_WORKER: '2' });
    gateways.push(second);
    await eventually(
      async () => (await second.api('GET', '/health', { admin: true })).body.cluster.devicesOwned >= 1,
      'a device handed to the second process',
    );
    const moved = await eventually(async () => {
      for (const device of devices) if (await ownedBy(second, device.id)) return device;
      return undefined;
    }, 'the device that moved');
    // Queued through the second process while the session is closed there; the first one does not follow the device now.
    expect((await second.api('POST', `/devices/${moved.id}/session/close`, { deviceKey: moved.key })).status).toBe(200);
    const later = [await send(second, moved, 'second'), await send(second, moved, 'third')];
    expect(later.map((answer) => answer.status)).toEqual([202, 202]);
    // The second process stops: the device goes back to the first, which must read the outbox again.
    gateways.splice(gateways.indexOf(second), 1);
    await second.close();
    await eventually(
      async () => (await first.api('GET', '/health', { admin: true })).body.cluster.devicesOwned === 3,
      'the device back on the first process',
    );
    expect((await first.api('POST', `/devices/${moved.id}/session/open`, { deviceKey: moved.key })).status).toBe(202);
    await waitForState(first.api, moved, 'online');
    await eventually(async () => {
      const sent = new Set((await statuses(moved.id)).filter((s) => s.status === 'sent').map((s) => s.waMessageId));
      return later.every((answer) => sent.has(answer.body.waMessageId));
    }, 'the messages queued meanwhile sent by the first process');
  });
});

/** Whether the gateway holds the device's lease now, as the log says. */
async function ownedBy(gateway: TestGateway, deviceId: string): Promise<boolean> {
  const lease = (await gateway.store.readStream(`lease-${deviceId}`, { direction: 'backwards', maxCount: 1 }))[0];
  const data = lease?.data as { owner?: string } | undefined;
  return (
    lease?.type === 'LeaseAcquired' &&
    data?.owner === (await gateway.api('GET', '/health', { admin: true })).body.cluster.memberId
  );
}

describe('session requests at the owner', () => {
  const request = (requestId: string, command: SessionCommand, at: Date) => ({
    type: 'SessionCommandRequested',
    data: { deviceId: 'd1', requestId, command, by: 'another-process', at: at.toISOString() },
  });

  it('runs a request once when it is seen live while the device is adopted, and none its asker gave up on', async () => {
    const store = new SqliteEventStore(join(tempDir('dmg-requests-'), 'events.sqlite'));
    const ran: string[] = [];
    // The run lasts until the adoption is done: both the live feed and the adoption see the request meanwhile.
    let finish: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (finish = resolve));
    const requests = new SessionRequests(
      store,
      'owner',
      () => true,
      async (_deviceId, command) => {
        ran.push(command.type);
        await running;
        return { state: 'online', changed: true };
      },
      pino({ level: 'silent' }),
    );
    // Asked a minute ago (its asker answered `busy` after 30 s), and now.
    await store.append(sessionRequestStream('d1'), [
      request('old', { type: 'close', logout: true }, new Date(Date.now() - 60_000)),
    ]);
    const fresh = await store.append(sessionRequestStream('d1'), [request('new', { type: 'reboot' }, new Date())]);
    const seen = (await store.readStream(sessionRequestStream('d1'))).filter((e) => e.position === fresh.position);
    // The live feed hands the new request over while the adoption reads what is pending.
    requests.observe(seen);
    await requests.adopt('d1');
    await eventually(() => ran.length > 0, 'the new request running');
    finish();
    await eventually(
      // Requested twice, the old one given up, the new one taken and answered.
      async () => (await store.readStream(sessionRequestStream('d1'))).length === 5,
      'both requests settled',
    );
    expect(ran).toEqual(['reboot']);
    // The old one is given up (its asker gave up long ago, by the clocks), the new one answered.
    const settled = (await store.readStream(sessionRequestStream('d1')))
      .filter((e) => e.type === 'SessionCommandAnswered' || e.type === 'SessionCommandGivenUp')
      .map((e) => ({ type: e.type, ...(e.data as object) }));
    expect(settled).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'SessionCommandGivenUp', requestId: 'old', by: 'owner' }),
        expect.objectContaining({
          type: 'SessionCommandAnswered',
          requestId: 'new',
          result: { state: 'online', changed: true },
        }),
      ]),
    );
    await store.close();
  });

  it('adopts a device without waiting for its pending calls to run: they are answered in the background', async () => {
    const store = new SqliteEventStore(join(tempDir('dmg-requests-adopt-'), 'events.sqlite'));
    let finish: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (finish = resolve));
    const ran: string[] = [];
    const requests = new SessionRequests(
      store,
      'owner',
      () => true,
      async (_deviceId, command) => {
        ran.push(command.type);
        // A call that waits for its session, then the engine: far longer than a lease tick may take.
        await running;
        return { state: 'online', changed: false, value: 'done' };
      },
      pino({ level: 'silent' }),
    );
    await store.append(sessionRequestStream('d1'), [
      request('slow', { type: 'call', name: 'groups.create', args: [], once: true }, new Date()),
    ]);
    // The call is held until finish() below: an adopt that waited for it would never end (the test's timeout).
    await requests.adopt('d1');
    // Answered all the same, once the call is done.
    await eventually(() => ran.length === 1, 'the call started');
    finish();
    await eventually(
      async () => (await store.readStream(sessionRequestStream('d1'))).some((e) => e.type === 'SessionCommandAnswered'),
      'the answer',
    );
    await store.close();
  });
});

describe('the session requests decider', () => {
  const { decide, evolve, initialState } = sessionRequestsDecider;
  const requested = evolve(initialState(), {
    type: 'SessionCommandRequested',
    data: { deviceId: 'd1', requestId: 'r1', command: { type: 'reboot' }, by: 'asker', at: new Date().toISOString() },
  } as never);
  const ids = { deviceId: 'd1', requestId: 'r1' };

  it('refuses a Take after the request was given up, and a GiveUp after it was taken: whichever came first wins', () => {
    const [givenUp] = decide({ type: 'GiveUp', ...ids, by: 'asker' }, requested);
    expect(givenUp).toEqual({ type: 'SessionCommandGivenUp', data: { ...ids, by: 'asker' } });
    const afterGiveUp = evolve(requested, givenUp);
    expect(decide({ type: 'Take', ...ids, by: 'owner' }, afterGiveUp)).toEqual([]);
    expect(
      decide({ type: 'Answer', ...ids, by: 'owner', result: { state: 'online', changed: true } }, afterGiveUp),
    ).toEqual([]);

    const [taken] = decide({ type: 'Take', ...ids, by: 'owner' }, requested);
    expect(taken.type).toBe('SessionCommandTaken');
    const afterTake = evolve(requested, taken);
    expect(decide({ type: 'GiveUp', ...ids, by: 'asker' }, afterTake)).toEqual([]);
    expect(
      decide({ type: 'Answer', ...ids, by: 'owner', result: { state: 'online', changed: true } }, afterTake),
    ).toHaveLength(1);
  });
});
