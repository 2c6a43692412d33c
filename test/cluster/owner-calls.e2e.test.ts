/**
 * Two gateways in this process on one SQLite file, as two processes would be (issue 30): a request that needs a
 * device's live connection (a group change, a number check, a sandbox injection, a scan) sent to the process that
 * does not run the device is carried to its owner (src/cluster/owner-calls.ts) and answered from there; devices
 * set up while a process joins (and devices are handed over to it) all come online.
 */
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type SessionCommand,
  SessionRequests,
  outcomeUnknown,
  sessionRequestStream,
} from '../../src/cluster/session-requests.js';
import { OwnerCalls } from '../../src/cluster/owner-calls.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import type { EventStore } from '../../src/eventstore/event-store.js';
import { DomainError } from '../../src/errors/domain-error.js';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { groupsStream } from '../../src/groups/group-events.js';
import { ADMIN_KEY, startTestGateway, tempDir } from '../support/gateway.js';
import { CHILD_GATEWAY_TESTS, type ChildGateway, spawnGateway } from '../support/child-gateway.js';
import { eventually } from '../support/eventually.js';
import { TestClock } from '../support/test-clock.js';
import { type TestDevice, createSandboxDevice, waitForState } from '../support/sessions.js';

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

const ENV = { GATEWAY_CLUSTER: 'true', LEASE_TIMEOUT: '2s', DEFAULT_ENGINE: 'sandbox' };

const memberOf = async (gateway: TestGateway) =>
  (await gateway.api('GET', '/health', { admin: true })).body.cluster.memberId as string;

/** Who holds the device's lease, as the log says now. */
async function ownerOf(store: TestGateway['store'], deviceId: string): Promise<string | undefined> {
  const [last] = await store.readStream(`lease-${deviceId}`, { direction: 'backwards', maxCount: 1 });
  return last?.type === 'LeaseAcquired' ? (last.data as { owner: string }).owner : undefined;
}

/** The calls carried for the device, with who answered each and how. */
async function carriedCalls(store: TestGateway['store'], deviceId: string) {
  const events = await store.readStream(sessionRequestStream(deviceId));
  const answers = new Map(
    events
      .filter((event) => event.type === 'SessionCommandAnswered')
      .map((event) => [
        (event.data as { requestId: string }).requestId,
        event.data as { by: string; result?: unknown; error?: { code: string } },
      ]),
  );
  return events
    .filter((event) => event.type === 'SessionCommandRequested')
    .map((event) => event.data as { requestId: string; by: string; command: { type: string; name?: string } })
    .filter((request) => request.command.type === 'call')
    .map((request) => ({ name: request.command.name, askedBy: request.by, answer: answers.get(request.requestId) }));
}

describe('engine-bound requests through a process that does not run the device', () => {
  const gateways: TestGateway[] = [];
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.close();
  });

  /** Two processes and a device online, linked at its owner's network (as the sandbox needed before). */
  async function deviceOnlineElsewhere(id: string, processes = 2) {
    const dataDir = tempDir('dmg-owner-calls-');
    for (let worker = 1; worker <= processes; worker++)
      gateways.push(await startTestGateway({ ...ENV, DATA_DIR: dataDir, GATEWAY_WORKER: String(worker) }));
    const device = await createSandboxDevice(gateways[0].api, id);
    const members = await Promise.all(gateways.map(memberOf));
    const ownerMember = await eventually(() => ownerOf(gateways[0].store, device.id), 'an owner for the device');
    const owner = gateways[members.indexOf(ownerMember)];
    const others = gateways.filter((gateway) => gateway !== owner);
    const other = others[0];
    expect((await owner.api('POST', `/devices/${device.id}/session/open`, { deviceKey: device.key })).status).toBe(202);
    await waitForState(owner.api, device, 'qr');
    const scanned = await owner.api('POST', `/sandbox/devices/${device.id}/scan`, {
      admin: true,
      json: { phone: '4915100005551' },
    });
    expect(scanned.status).toBe(202);
    await waitForState(other.api, device, 'online');
    return { device, owner, other, others, ownerMember, otherMember: members[gateways.indexOf(other)] };
  }

  it('creates a group and checks a number: the owner runs them, the group is created once', async () => {
    const { device, other, owner, ownerMember, otherMember } = await deviceOnlineElsewhere('oc-groups');
    const created = await other.api('POST', `/devices/${device.id}/groups`, {
      deviceKey: device.key,
      json: { subject: 'Carried', participants: ['4915100005552'] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ subject: 'Carried', isAdmin: true, size: 2, failed: [] });
    // Read your writes on the process that answered: its read models have what the owner recorded.
    const read = await other.api('GET', `/devices/${device.id}/groups/${created.body.groupId}`, {
      deviceKey: device.key,
    });
    expect(read.status).toBe(200);
    expect(read.body.subject).toBe('Carried');
    const renamed = await other.api('PATCH', `/devices/${device.id}/groups/${created.body.groupId}`, {
      deviceKey: device.key,
      json: { subject: 'Renamed' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.subject).toBe('Renamed');
    const checked = await other.api('GET', `/devices/${device.id}/contacts/4915100005553/check`, {
      deviceKey: device.key,
    });
    expect(checked.status).toBe(200);
    expect(checked.body).toEqual({ number: '4915100005553', exists: true, jid: '4915100005553@s.whatsapp.net' });
    // The owner's own refusal comes back as it is: a number that does not exist in the sandbox is a 200 `exists: false`,
    // a group the account is not in a 404.
    const missing = await other.api('GET', `/devices/${device.id}/groups/120363000000000000@g.us`, {
      deviceKey: device.key,
    });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');

    // Asked by the process that got the requests, answered by the owner.
    const calls = await carriedCalls(owner.store, device.id);
    expect(calls.map((call) => call.name)).toEqual([
      'groups.create',
      'groups.get',
      'groups.update',
      'contacts.check',
      'groups.get',
    ]);
    for (const call of calls) {
      expect(call.askedBy).toBe(otherMember);
      expect(call.answer?.by).toBe(ownerMember);
    }
    const created_ = (await owner.store.readStream(groupsStream(device.id))).filter(
      (event) => (event.data as { reason?: string }).reason === 'created',
    );
    expect(created_).toHaveLength(1);
  });

  it('records a sandbox inbound message sent through the other process once, at the owner', async () => {
    const { device, other, owner } = await deviceOnlineElsewhere('oc-inbound');
    const received = await other.api('POST', `/sandbox/devices/${device.id}/inbound`, {
      admin: true,
      json: { from: '4915100005554', body: 'through the other process' },
    });
    expect(received.status).toBe(202);
    // A 202 is durable: the message is in the log already.
    const recorded = (await owner.store.readStream(inboxStream(device.id))).filter((event) =>
      JSON.stringify(event.data).includes(received.body.waMessageId),
    );
    expect(recorded.map((event) => event.type)).toEqual(['MessageReceived']);
    expect((recorded[0].data as { body: string }).body).toBe('through the other process');
    // And the device's chat says so on the process that answered.
    const chats = await other.api('GET', `/devices/${device.id}/chats/4915100005554/messages`, {
      deviceKey: device.key,
    });
    expect(chats.status).toBe(200);
    expect(chats.body.items.map((m: { waMessageId: string }) => m.waMessageId)).toContain(received.body.waMessageId);
  });

  it("asks for a chat's older messages through the other process: the owner asks its phone, the answer is imported", async () => {
    const { device, other, owner, ownerMember } = await deviceOnlineElsewhere('oc-history');
    const CHAT = '4915100005556';
    const received = await other.api('POST', `/sandbox/devices/${device.id}/inbound`, {
      admin: true,
      json: { from: CHAT, body: 'the newest' },
    });
    expect(received.status).toBe(202);
    const asked = await other.api('POST', `/devices/${device.id}/chats/${CHAT}/history`, {
      deviceKey: device.key,
      json: { count: 2 },
    });
    expect(asked.status, JSON.stringify(asked.body)).toBe(202);
    expect(asked.body.before.waMessageId).toBe(received.body.waMessageId);
    const page = await eventually(async () => {
      const items = (await other.api('GET', `/devices/${device.id}/chats/${CHAT}/messages`, { deviceKey: device.key }))
        .body.items as Array<{ historical: boolean }>;
      return items.length === 3 ? items : undefined;
    }, 'the older messages on the process that asked');
    expect(page.map((m) => m.historical)).toEqual([false, true, true]);
    const calls = await carriedCalls(owner.store, device.id);
    expect(calls.filter((call) => call.name === 'chats.fetchHistory').map((call) => call.answer?.by)).toEqual([
      ownerMember,
    ]);
  });

  it('accepts many injections at once through the processes that do not run the device: every one 202, none refused', async () => {
    const { device, others, owner } = await deviceOnlineElsewhere('oc-burst', 3);
    // Three processes write the device's request stream at once: two askers their requests, the owner its takes and
    // answers. A request needs no decision and goes in whatever the stream's revision (issue 30: these were refused
    // `409 concurrent_change` after 5 conflicting appends).
    const answers = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        others[i % 2].api('POST', `/sandbox/devices/${device.id}/inbound`, {
          admin: true,
          json: { from: '4915100005554', body: `burst ${i}` },
        }),
      ),
    );
    expect(answers.filter((answer) => answer.status !== 202).map((answer) => answer.body)).toEqual([]);
    const recorded = (await owner.store.readStream(inboxStream(device.id))).filter(
      (event) => event.type === 'MessageReceived',
    );
    expect(new Set(recorded.map((event) => (event.data as { body: string }).body)).size).toBe(80);
    // Each asked once, answered once, by the owner.
    const calls = (await carriedCalls(owner.store, device.id)).filter((call) => call.name === 'sandbox.inbound');
    expect(calls).toHaveLength(80);
    expect(calls.every((call) => call.answer?.result !== undefined)).toBe(true);
  });

  it('answers number checks without a refusal while devices are handed over to a process that joins', async () => {
    const dataDir = tempDir('dmg-owner-calls-handover-');
    const first = await startTestGateway({ ...ENV, DATA_DIR: dataDir, GATEWAY_WORKER: '1' });
    gateways.push(first);
    const devices = await Promise.all(['h0', 'h1', 'h2', 'h3'].map((id) => createSandboxDevice(first.api, id)));
    for (const [i, device] of devices.entries()) {
      await first.api('POST', `/devices/${device.id}/session/open`, { deviceKey: device.key });
      await waitForState(first.api, device, 'qr');
      await first.api('POST', `/sandbox/devices/${device.id}/scan`, {
        admin: true,
        json: { phone: `49151000080${i}1` },
      });
      await waitForState(first.api, device, 'online');
    }
    const firstMember = await memberOf(first);
    const second = await startTestGateway({ ...ENV, DATA_DIR: dataDir, GATEWAY_WORKER: '2' });
    gateways.push(second);
    // Asked through the first process all along: the devices it hands over are carried to the second, which
    // resumes their sessions; a check that arrives meanwhile waits for the session rather than be refused.
    const answers: Array<{ device: string; status: number; code?: string }> = [];
    const moved = async () =>
      (await Promise.all(devices.map((device) => ownerOf(first.store, device.id)))).filter((o) => o !== firstMember)
        .length === 2;
    let round = 0;
    while (!(await moved()) || round < 5) {
      round += 1;
      await Promise.all(
        devices.map(async (device) => {
          const checked = await first.api(
            'GET',
            // One number per device: answered from the owner's cache after its first lookup (fresh lookups are rate-limited).
            `/devices/${device.id}/contacts/4915100008199/check`,
            {
              deviceKey: device.key,
            },
          );
          answers.push({
            device: device.id,
            status: checked.status,
            ...(checked.body.code ? { code: checked.body.code } : {}),
          });
        }),
      );
      if (round > 400) throw new Error('the devices were not handed over');
    }
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
  });

  it('sets devices up (create, open, scan through either process) while a second process joins: all come online', async () => {
    const dataDir = tempDir('dmg-owner-calls-join-');
    const first = await startTestGateway({ ...ENV, DATA_DIR: dataDir, GATEWAY_WORKER: '1' });
    gateways.push(first);
    const open = async (gateway: TestGateway, device: TestDevice) => {
      const opened = await gateway.api('POST', `/devices/${device.id}/session/open`, { deviceKey: device.key });
      expect([200, 202]).toContain(opened.status);
    };
    const before = await Promise.all(['j0', 'j1', 'j2', 'j3'].map((id) => createSandboxDevice(first.api, id)));
    for (const device of before) await open(first, device);
    for (const device of before) await waitForState(first.api, device, 'qr');
    // The second process joins: it takes its share of the devices (handed over while they show their codes).
    const second = await startTestGateway({ ...ENV, DATA_DIR: dataDir, GATEWAY_WORKER: '2' });
    gateways.push(second);
    const both = [first, second];
    const later = await Promise.all(['j4', 'j5', 'j6', 'j7'].map((id, i) => createSandboxDevice(both[i % 2].api, id)));
    await Promise.all(later.map((device, i) => open(both[(i + 1) % 2], device)));
    const all = [...before, ...later];
    await Promise.all(
      all.map(async (device, i) => {
        const through = both[i % 2];
        await waitForState(through.api, device, 'qr');
        const scanned = await through.api('POST', `/sandbox/devices/${device.id}/scan`, {
          admin: true,
          json: { phone: `49151000060${i}1` },
        });
        expect({ device: device.id, status: scanned.status, body: scanned.body }).toMatchObject({ status: 202 });
      }),
    );
    for (const device of all) await waitForState(second.api, device, 'online', 20_000);
    // Shared out between the two.
    const owners = await Promise.all(all.map((device) => ownerOf(first.store, device.id)));
    expect(new Set(owners).size).toBe(2);
  });
});

/**
 * One request on a connection of its own: node:cluster's primary hands each new connection to the next worker,
 * so requests are spread over the processes as a client without keep-alive spreads them.
 */
function freshConnection(url: string) {
  return (method: string, path: string, options: { admin?: boolean; deviceKey?: string; json?: unknown } = {}) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const body = options.json === undefined ? undefined : JSON.stringify(options.json);
      const sent = request(
        `${url}${path}`,
        {
          method,
          agent: false,
          headers: {
            ...(options.admin ? { 'x-admin-key': ADMIN_KEY } : {}),
            ...(options.deviceKey ? { 'x-device-key': options.deviceKey } : {}),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, body: text ? JSON.parse(text) : text }));
        },
      );
      sent.on('error', reject);
      sent.end(body);
    });
}

describe('GATEWAY_PROCESSES=3 on one port', CHILD_GATEWAY_TESTS, () => {
  let gateway: ChildGateway | undefined;
  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
  });

  it('sets devices up and changes their groups through whichever process gets each request', async () => {
    gateway = await spawnGateway(tempDir('dmg-owner-calls-processes-'), {
      DEFAULT_ENGINE: 'sandbox',
      GATEWAY_PROCESSES: '3',
      LEASE_TIMEOUT: '2s',
    });
    const api = freshConnection(gateway.url);
    // Set up while the workers start and join one after the other (devices are handed over meanwhile).
    const devices: TestDevice[] = [];
    for (let i = 0; i < 6; i++) {
      const created = await api('POST', '/devices', {
        admin: true,
        json: { id: `p${i}`, name: `p${i}`, engine: 'sandbox' },
      });
      expect(created.status).toBe(201);
      devices.push({ id: `p${i}`, key: created.body.deviceKey });
    }
    await Promise.all(
      devices.map(async (device, i) => {
        // A 503 is "try again, nothing changed" (the shared file busy while three processes take their new devices):
        // a client opens again. Anything else but 200/202 fails, with its answer.
        let opened = await api('POST', `/devices/${device.id}/session/open`, { deviceKey: device.key });
        for (let attempt = 0; opened.status === 503 && attempt < 5; attempt++)
          opened = await api('POST', `/devices/${device.id}/session/open`, { deviceKey: device.key });
        expect([200, 202], JSON.stringify(opened.body)).toContain(opened.status);
        // As a client does: the code on show, then the phone scans it.
        await eventually(
          async () => (await api('GET', `/devices/${device.id}/session/qr`, { deviceKey: device.key })).status === 200,
          `${device.id} shows a code`,
          30_000,
        );
        const scanned = await api('POST', `/sandbox/devices/${device.id}/scan`, {
          admin: true,
          json: { phone: `49151000070${i}1` },
        });
        expect({ device: device.id, status: scanned.status, body: scanned.body }).toMatchObject({ status: 202 });
      }),
    );
    const balanced = () =>
      eventually(
        async () => {
          const { members } = (await api('GET', '/health', { admin: true })).body.cluster;
          return members.length === 3 && members.every((member: { devices: number }) => member.devices === 2);
        },
        'two devices on each of three processes',
        30_000,
      );
    const online = async () => {
      for (const device of devices)
        await eventually(
          async () =>
            (await api('GET', `/devices/${device.id}/session/state`, { deviceKey: device.key })).body.state ===
            'online',
          `${device.id} online`,
          30_000,
        );
    };
    await online();
    // Once the last workers took their share: the sandbox's groups live in the network of the process that made
    // them, so a device handed over after its group was made would not find it there (not so on WhatsApp).
    await balanced();
    await online();
    for (const [i, device] of devices.entries()) {
      const created = await api('POST', `/devices/${device.id}/groups`, {
        deviceKey: device.key,
        json: { subject: `g${i}`, participants: ['4915100007999'] },
      });
      expect({ device: device.id, status: created.status, body: created.body }).toMatchObject({ status: 201 });
      const checked = await api('GET', `/devices/${device.id}/contacts/4915100007998/check`, { deviceKey: device.key });
      expect({ device: device.id, status: checked.status, body: checked.body }).toMatchObject({ status: 200 });
      const listed = await api('GET', `/devices/${device.id}/groups`, { deviceKey: device.key });
      expect(listed.body.items.map((group: { subject: string }) => group.subject)).toEqual([`g${i}`]);
    }
  });
});

describe('calls carried through the store', () => {
  it('runs a call that changes something once, though a second owner adopts the device while the first runs it', async () => {
    const store = new SqliteEventStore(join(tempDir('dmg-owner-calls-once-'), 'events.sqlite'));
    const log = pino({ level: 'silent' });
    const ran: string[] = [];
    // The first owner's run lasts until the second owner has adopted the device.
    let adopted: () => void = () => undefined;
    const handedOver = new Promise<void>((resolve) => (adopted = resolve));
    const ownerAt = (member: string, until: Promise<void>) =>
      new SessionRequests(
        store,
        member,
        () => true,
        async () => {
          ran.push(member);
          await until;
          return { state: 'online', changed: false, value: `${member} made it` };
        },
        log,
      );
    const first = ownerAt('first', handedOver);
    const second = ownerAt('second', Promise.resolve());
    const asker = new SessionRequests(
      store,
      'asker',
      () => false,
      () => Promise.reject(new Error('not here')),
      log,
    );
    const feed = async () => {
      // The log as each process's follower hands it over.
      let after = 0;
      for (;;) {
        const events = await store.readAll({ after, maxCount: 100 });
        if (events.length === 0) return;
        for (const process of [asker, first]) process.observe(events);
        after = events.at(-1)!.position;
      }
    };
    const asked = asker.ask('d1', { type: 'call', name: 'groups.create', args: ['subject', []], once: true });
    await eventually(async () => (await store.readStream(sessionRequestStream('d1'))).length === 1, 'the request');
    await feed();
    await eventually(() => ran.length === 1, 'the first owner runs it');
    // A handover: the second owner answers what is pending, but this one was taken.
    await second.adopt('d1');
    adopted();
    await eventually(async () => {
      await feed();
      return (await store.readStream(sessionRequestStream('d1'))).some((e) => e.type === 'SessionCommandAnswered');
    }, 'the answer');
    expect((await asked).value).toBe('first made it');
    expect(ran).toEqual(['first']);
    await store.close();
  });

  it('answers 409 session_not_online with the recorded state, or busy, when no owner answers in time', async () => {
    const store = new SqliteEventStore(join(tempDir('dmg-owner-calls-deadline-'), 'events.sqlite'));
    const log = pino({ level: 'silent' });
    // Nobody runs the device.
    const requests = new SessionRequests(
      store,
      'asker',
      () => false,
      () => Promise.reject(new Error('not here')),
      log,
    );
    let recorded = 'closed';
    const calls = new OwnerCalls({
      position: () => 0,
      settle: async () => true,
      recordedState: () => recorded,
      timeoutMs: 300,
    });
    calls.carryWith({
      elsewhere: () => true,
      carry: async (deviceId, call, timeoutMs) => await requests.ask(deviceId, call, { timeoutMs }),
    });
    const check = calls.define('contacts.check', 'repeatable', async (_deviceId: string, number: string) => number);
    await expect(check('d1', '4915100005555')).rejects.toMatchObject({
      code: 'session_not_online',
      message: 'the session is closed, not online',
    });
    recorded = 'online';
    await expect(check('d1', '4915100005555')).rejects.toMatchObject({ code: 'busy', retryAfterSeconds: 5 });
    await store.close();
  });

  /** The log as each process's follower hands it over (a subscription from its start), until stopped. */
  function follow(store: EventStore, processes: SessionRequests[]) {
    const subscription = store.subscribe();
    const done = (async () => {
      for await (const events of subscription) for (const process of processes) process.observe(events);
    })();
    return async () => {
      await subscription.close();
      await done;
    };
  }

  const createGroup: SessionCommand = { type: 'call', name: 'groups.create', args: ['subject', []], once: true };
  const asker = (store: EventStore, clock?: TestClock) =>
    new SessionRequests(
      store,
      'asker',
      () => false,
      () => Promise.reject(new Error('not here')),
      pino({ level: 'silent' }),
      clock ? { clock } : {},
    );
  /** What the promise settles with, once `clock` has moved far enough on for it to settle. */
  const settledAsTimePasses = async <T>(clock: TestClock, promise: Promise<T>, what: string): Promise<T> => {
    const outcome: { value?: T; error?: unknown } = {};
    void promise.then(
      (value) => (outcome.value = value),
      (error: unknown) => (outcome.error = error ?? new Error('rejected')),
    );
    await eventually(async () => {
      if ('value' in outcome || 'error' in outcome) return true;
      await clock.advance(100);
      return false;
    }, what);
    if ('error' in outcome) throw outcome.error;
    return outcome.value!;
  };

  it('does not run a call given up at its deadline, though the owner (its clock behind) gets to it later', async () => {
    const store = new SqliteEventStore(join(tempDir('dmg-owner-calls-given-up-'), 'events.sqlite'));
    const clock = new TestClock({ running: true });
    const ran: string[] = [];
    const asking = asker(store, clock);
    // The owner's waits before the run (its session resuming, its read models) last until the asker has given up, and
    // its clock, a minute behind the asker's, says there is time left: the stream decides, not the clocks.
    let prepared: (() => void) | undefined;
    let done = 0;
    const owner = new SessionRequests(
      store,
      'owner',
      () => true,
      async () => {
        ran.push('owner');
        return { state: 'online', changed: false, value: 'made' };
      },
      pino({ level: 'silent' }),
      {
        prepare: () => new Promise<void>((resolve) => (prepared = resolve)),
        now: () => clock.now() - 60_000,
        clock,
        done: () => (done += 1),
      },
    );
    const stop = follow(store, [asking, owner]);
    const answering = asking.ask('d1', createGroup, { timeoutMs: 300 }).catch((error: unknown) => error);
    await eventually(() => prepared, 'the owner preparing the run');
    await clock.advance(300);
    const answer = await answering;
    expect(answer).toMatchObject({ code: 'busy', retryAfterSeconds: 5 });
    expect(outcomeUnknown(answer)).toBe(false);
    prepared!();
    await eventually(() => done === 1, 'the owner done with the request');
    await stop();
    expect(ran).toEqual([]);
    const types = (await store.readStream(sessionRequestStream('d1'))).map((e) => e.type);
    expect(types).toEqual(['SessionCommandRequested', 'SessionCommandGivenUp']);
    await store.close();
  });

  it('waits past its deadline for a call its owner took before it, then says the outcome is unknown', async () => {
    const store = new SqliteEventStore(join(tempDir('dmg-owner-calls-taken-'), 'events.sqlite'));
    const clock = new TestClock({ running: true });
    const asking = asker(store, clock);
    // Each run lasts until the test ends it.
    const runs: Array<() => void> = [];
    const owner = new SessionRequests(
      store,
      'owner',
      () => true,
      async () => {
        await new Promise<void>((resolve) => runs.push(resolve));
        return { state: 'online', changed: false, value: 'made' };
      },
      pino({ level: 'silent' }),
      { clock },
    );
    const stop = follow(store, [asking, owner]);
    // Taken at once, answered after the deadline but within the longer wait: the answer, not `busy`.
    const answering = asking.ask('d1', createGroup, { timeoutMs: 300, lateTimeoutMs: 3_000 });
    await eventually(() => runs.length === 1, 'the owner running the first call');
    await clock.advance(300);
    runs[0]();
    expect((await answering).value).toBe('made');
    // Answered after both: `busy`, saying the outcome is unknown (it ran).
    const unknowing = asking
      .ask('d1', createGroup, { timeoutMs: 200, lateTimeoutMs: 200 })
      .catch((error: unknown) => error);
    await eventually(() => runs.length === 2, 'the owner running the second call');
    const unknown = await settledAsTimePasses(clock, unknowing, 'the asker giving up on the answer');
    runs[1]();
    expect(unknown).toMatchObject({
      code: 'busy',
      reason: 'outcome_unknown',
      message: expect.stringMatching(/unknown/),
    });
    expect(outcomeUnknown(unknown)).toBe(true);
    await eventually(
      async () =>
        (await store.readStream(sessionRequestStream('d1'))).filter((e) => e.type === 'SessionCommandAnswered')
          .length === 2,
      'both answered by the owner',
    );
    await stop();
    const types = (await store.readStream(sessionRequestStream('d1'))).map((e) => e.type);
    expect(types).not.toContain('SessionCommandGivenUp');
    await store.close();
  });

  describe('a sandbox inbound upload carried to the owner', () => {
    let gateway: TestGateway | undefined;
    afterEach(async () => {
      await gateway?.close();
      gateway = undefined;
    });

    /** An inbound image through a process whose calls for the device are carried by `carry`; the held file's path. */
    async function inboundThrough(carry: (deviceId: string, call: SessionCommand) => Promise<{ value?: unknown }>) {
      gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox' });
      const device = await createSandboxDevice(gateway.api, 'upload');
      let held: string | undefined;
      gateway.calls.carryWith({
        elsewhere: () => true,
        carry: async (deviceId, call) => {
          held = (call.args[1] as { path?: string } | null)?.path;
          expect(held && existsSync(held)).toBe(true);
          return carry(deviceId, call);
        },
      });
      const answer = await gateway.api('POST', `/sandbox/devices/${device.id}/inbound`, {
        admin: true,
        json: {
          from: '4915100005556',
          type: 'image',
          media: { base64: Buffer.alloc(4096, 7).toString('base64'), mimetype: 'image/jpeg' },
        },
      });
      expect(held).toMatch(/\.sandbox$/);
      return { answer, held: held! };
    }

    it('is released when nobody runs it: given up at the deadline, or refused before the run', async () => {
      const given = await inboundThrough((deviceId, call) =>
        // Nobody runs the device: given up at the deadline.
        asker(gateway!.store).ask(deviceId, call, { timeoutMs: 200 }),
      );
      // (In the words of the device's recorded state, which is not online: it was never opened.)
      expect(given.answer.body.code).toBe('session_not_online');
      expect(existsSync(given.held)).toBe(false);
      await gateway!.close();
      const refused = await inboundThrough(() =>
        Promise.reject(new DomainError('busy', 'this process cannot serve sandbox.inbound; try again')),
      );
      expect(refused.answer.body.code).toBe('session_not_online');
      expect(existsSync(refused.held)).toBe(false);
      await gateway!.close();
      // Answered without recording it (the owner's session is not online).
      const notOnline = await inboundThrough(async () => ({ value: { state: 'closed' } }));
      expect(notOnline.answer.status).toBe(409);
      expect(existsSync(notOnline.held)).toBe(false);
    });

    it('is left to the owner that took it and did not answer in time (it may be reading it)', async () => {
      let stop: (() => Promise<void>) | undefined;
      const clock = new TestClock({ running: true });
      // The owner's run lasts until the test ends it.
      let finish: (() => void) | undefined;
      let done = 0;
      const through = inboundThrough((deviceId, call) => {
        const store = gateway!.store;
        const asking = asker(store, clock);
        const owner = new SessionRequests(
          store,
          'owner',
          () => true,
          async () => {
            await new Promise<void>((resolve) => (finish = resolve));
            return { state: 'online', changed: false, value: { state: 'online' } };
          },
          pino({ level: 'silent' }),
          { clock, done: () => (done += 1) },
        );
        stop = follow(store, [asking, owner]);
        return asking.ask(deviceId, call, { timeoutMs: 200, lateTimeoutMs: 200 });
      });
      await eventually(() => finish, 'the owner running the call');
      const { answer, held } = await settledAsTimePasses(clock, through, 'the answer of the inbound upload');
      expect(answer.status).toBe(503);
      expect(answer.body.reason).toBe('outcome_unknown');
      expect(existsSync(held)).toBe(true);
      finish!();
      await eventually(() => done === 1, 'the owner done with the call');
      await stop?.();
    });
  });
});
