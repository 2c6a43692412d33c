/**
 * Device leases between members on one store (two DeviceLeases on one SQLite file, as two processes would
 * have): a fair share each, takeover once a member stops heartbeating, handover on a graceful stop, and a
 * member that was paused past its lease cannot write for the device any more (its fence is refused).
 */
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeviceLeases } from '../../src/cluster/device-leases.js';
import { DeviceFencedStore } from '../../src/cluster/fenced-store.js';
import { FenceRejectedError } from '../../src/eventstore/event-store.js';
import type { EventStore } from '../../src/eventstore/event-store.js';
import { openEventStoreDbStore } from '../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { type ClockTimer, systemClock } from '../../src/time/clock.js';
import { startEsdbTestServer } from '../support/esdb-test-server.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp-dir.js';
import { TestClock } from '../support/test-clock.js';

const log = pino({ level: 'silent' });
const devices = Array.from({ length: 12 }, (_, i) => `dev-${i}`);
// Long enough that a heartbeat delayed by a busy CI machine (every test file running at once) does not read as
// a silent member: at 600 ms, members dropped their devices for want of heartbeats and never settled on 6 each;
// at 2 s, a member whose heartbeat took over a second to append (the EventStoreDB test server under load)
// stopped its devices, as it must: 1.6 s without a heartbeat is when others may soon take them.
const TIMEOUT_MS = 3_000;

interface Member {
  leases: DeviceLeases;
  store: EventStore;
  running: Set<string>;
  lost: string[];
  /** Deleted devices it closed and unlinked. */
  deleted: string[];
  /** Its timers' clock, when not the system's. */
  clock?: TestClock;
}

const cleanups: Array<{ stop: () => Promise<void>; close: () => Promise<void> }> = [];
afterEach(async () => {
  // Every member stops before any store closes: @eventstore/db-client keeps the answers awaited by every
  // client's BatchAppend in one table per process, and a client that closes clears it, so another client's
  // heartbeat answered afterwards throws inside the library (an unhandled rejection).
  const members = cleanups.splice(0).reverse();
  for (const member of members) await member.stop().catch(() => undefined);
  for (const member of members) await member.close().catch(() => undefined);
});

interface MemberOptions {
  /** The store as the member sees it (a store that fails some writes). */
  wrap?: (store: EventStore) => EventStore;
  /** Before a device starts: throwing (or rejecting) fails its start; a promise holds the start until it settles. */
  starting?: (deviceId: string) => void | Promise<void>;
  /** While a device stops. */
  stopping?: (deviceId: string, leases: DeviceLeases) => void;
  devices?: readonly string[];
  /** Devices whose deletion the log records. */
  deleted?: ReadonlySet<string>;
  /** The member's timers and time (default: the system's). */
  clock?: TestClock;
  /** Between ticks (default 50 ms). */
  tickMs?: number;
}

async function member(file: string, name: string, now?: () => number, options: MemberOptions = {}): Promise<Member> {
  // A file: two SQLite connections, as two processes on one machine; a URL: two clients of one EventStoreDB.
  const opened: EventStore = file.startsWith('esdb://')
    ? await openEventStoreDbStore(file)
    : new SqliteEventStore(file, { sharedFile: true });
  const store = options.wrap ? options.wrap(opened) : opened;
  const running = new Set<string>();
  const lost: string[] = [];
  const deleted: string[] = [];
  const leases: DeviceLeases = new DeviceLeases({
    store,
    memberId: name,
    timeoutMs: TIMEOUT_MS,
    tickMs: options.tickMs ?? 50,
    log,
    devices: () => options.devices ?? devices,
    after: () => 0,
    ...(now ? { now } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    onAcquired: async (deviceId) => {
      await options.starting?.(deviceId);
      running.add(deviceId);
    },
    onLost: async (deviceId) => {
      options.stopping?.(deviceId, leases);
      running.delete(deviceId);
      lost.push(deviceId);
    },
    onDeleted: async (deviceId) => void deleted.push(deviceId),
    isDeleted: async (deviceId) => options.deleted?.has(deviceId) ?? false,
  });
  cleanups.push({ stop: () => leases.stop(), close: () => opened.close() });
  return { leases, store, running, lost, deleted, ...(options.clock ? { clock: options.clock } : {}) };
}

/** Pauses a member as SIGSTOP would: no more ticks, no more reading of the log; its state stays as it was. */
async function pause(member: Member): Promise<{ tick(): Promise<void> }> {
  const paused = member.leases as unknown as {
    timer: ClockTimer | undefined;
    watchdog: ClockTimer | undefined;
    heartbeater: ClockTimer | undefined;
    schedule: () => void;
    follower: { stop(): Promise<void> };
    ticking: Promise<void>;
    tick(): Promise<void>;
  };
  const clock = member.clock ?? systemClock;
  paused.schedule = () => undefined;
  clock.clear(paused.watchdog);
  clock.clear(paused.heartbeater);
  await eventually(() => paused.timer === undefined || (clock.clear(paused.timer), true), 'paused');
  // A tick under way finishes first (SIGSTOP comes between two moments): nothing it writes lands later.
  await paused.ticking;
  await paused.follower.stop();
  return paused;
}

const overlap = (a: Member, b: Member) => [...a.running].filter((d) => b.running.has(d));

/** Starts a member alone on its store and waits until it runs every device (`count` of them). */
async function startedWithAll(member: Member, count = devices.length): Promise<void> {
  await member.leases.start();
  await eventually(() => member.running.size === count, 'the member runs every device');
}

const STORES: Array<[string, () => Promise<string>]> = [
  ['sqlite', async () => join(tempDir('dmg-leases-'), 'events.sqlite')],
  [
    'eventstoredb (test server)',
    async () => {
      const server = await startEsdbTestServer();
      cleanups.unshift({ stop: async () => undefined, close: () => server.stop() });
      return server.url;
    },
  ],
];

describe.each(STORES)('device leases on %s', (_name, location) => {
  it('spreads devices over the members, never runs one twice, and hands them over on a graceful stop', async () => {
    const file = await location();
    const a = await member(file, 'a');
    await startedWithAll(a);
    const b = await member(file, 'b');
    await b.leases.start();
    await eventually(() => a.running.size === 6 && b.running.size === 6, 'a fair share each');
    expect(overlap(a, b)).toEqual([]);
    // a's view of the others follows the log: it comes to the same counts.
    await eventually(
      () =>
        a.leases
          .distribution()
          .map((m) => m.devices)
          .join() === '6,6',
      "a's view of the distribution",
    );
    const stoppedAt = Date.now();
    await a.leases.stop();
    // Handed over at once, not after the lease timeout.
    await eventually(() => b.running.size === devices.length, 'b takes every device', TIMEOUT_MS);
    expect(Date.now() - stoppedAt).toBeLessThan(TIMEOUT_MS);
  });

  it("takes the devices of a member that stopped heartbeating, and refuses the paused member's writes", async () => {
    const file = await location();
    const clock = new TestClock({ running: true });
    const a = await member(file, 'a', undefined, { clock });
    await startedWithAll(a);
    const fenced = new DeviceFencedStore(a.store, 'dev-0', a.leases);
    await fenced.append('session-dev-0', [{ type: 'Probe', data: {} }]);
    const paused = await pause(a);
    const b = await member(file, 'b', undefined, { clock });
    await b.leases.start();
    expect(b.running.size).toBe(0);
    // The lease timeout passes on the clock, not waited for.
    await clock.advance(TIMEOUT_MS);
    await eventually(() => b.running.size === devices.length, 'b takes over after the lease timeout');
    // a still believes it holds dev-0: its write carries the old fence and is refused.
    expect(a.leases.owns('dev-0')).toBe(true);
    await expect(fenced.append('session-dev-0', [{ type: 'Probe', data: {} }])).rejects.toBeInstanceOf(
      FenceRejectedError,
    );
    expect(a.leases.owns('dev-0')).toBe(false);
    expect(a.lost).toContain('dev-0');
    expect((await a.store.readStream('session-dev-0')).length).toBe(1);
    // Resumed, a's first tick sees how long it was silent and stops every device before it writes anything.
    await paused.tick();
    expect(a.leases.owned()).toEqual([]);
    await eventually(() => a.running.size === 0, 'a stopped every device');
    // That tick's heartbeat makes a live again, so b may already be handing devices back to it (a rebalance):
    // what holds is that no device runs on both.
    expect(b.running.size).toBeGreaterThan(0);
    expect(overlap(a, b)).toEqual([]);
  });

  it('runs again the devices it stopped when its heartbeats could not be written, once they can', async () => {
    const file = await location();
    let skew = 0;
    const a = await member(file, 'a', () => Date.now() + skew);
    await startedWithAll(a);
    // As if no heartbeat could be written for a lease timeout (the file locked by a paused process): a stops every
    // device by itself, while the log still names it as their holder.
    skew += TIMEOUT_MS;
    await eventually(() => a.lost.length >= devices.length, 'a stopped every device');
    // Its heartbeats go through again: nobody else takes a live member's devices, so a runs them again itself.
    await eventually(() => a.running.size === devices.length, 'a runs every device again', 3 * TIMEOUT_MS);
    expect((await a.store.readStream('lease-dev-0')).map((e) => e.type)).toEqual(['LeaseAcquired']);
  });

  it('stops its devices when heartbeats stall, even while a tick waits on one', async () => {
    const file = await location();
    let stalled = false;
    const waiting: Array<() => void> = [];
    const clock = new TestClock({ running: true });
    const a = await member(file, 'a', undefined, {
      clock,
      wrap: (store) =>
        new Proxy(store, {
          get(target, key, receiver) {
            if (key !== 'append') return Reflect.get(target, key, receiver) as unknown;
            // A store that stops answering (an EventStoreDB write waiting for its deadline): the tick waits here.
            return (...args: Parameters<EventStore['append']>) =>
              stalled
                ? new Promise((resolve) => waiting.push(() => resolve(target.append(...args))))
                : target.append(...args);
          },
        }),
    });
    await startedWithAll(a);
    stalled = true;
    try {
      // Silent for the lease timeout less its margin: stopped then, before others may take them.
      await clock.advance(TIMEOUT_MS - TIMEOUT_MS / 5 + 1);
      expect(a.running.size).toBe(0);
    } finally {
      stalled = false;
      for (const answer of waiting.splice(0)) answer();
    }
  });

  it('keeps heartbeating while a tick waits on a device that starts slower than the lease timeout (issue 31)', async () => {
    const file = await location();
    const clock = new TestClock({ running: true });
    const list = devices.slice(0, 3);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const a = await member(file, 'a', undefined, {
      clock,
      devices: list,
      // A device added later whose start waits (its session's store calls retried through an election).
      starting: (deviceId) => (deviceId === 'dev-slow' ? held : undefined),
    });
    await startedWithAll(a, 3);
    const heartbeats = async () =>
      (await a.store.readStream('member-a')).filter((e) => e.type === 'MemberHeartbeat').length;
    list.push('dev-slow');
    await eventually(() => a.leases.owned().includes('dev-slow'), 'a holds the slow device, its start under way');
    try {
      // Two lease timeouts pass, a heartbeat interval at a time, while that tick waits on the start.
      for (let passed = 0; passed < 2 * TIMEOUT_MS; passed += TIMEOUT_MS / 4) {
        const before = await heartbeats();
        await clock.advance(TIMEOUT_MS / 4);
        await eventually(async () => (await heartbeats()) > before, `a heartbeat after ${passed + TIMEOUT_MS / 4} ms`);
      }
      expect(a.lost).toEqual([]);
      expect([...a.running].sort()).toEqual(devices.slice(0, 3).sort());
    } finally {
      release();
    }
    await eventually(() => a.running.has('dev-slow'), 'the slow device started');
  });

  it('hands back a device whose start failed, and starts it again later', async () => {
    const file = await location();
    let failures = 0;
    const a = await member(file, 'a', undefined, {
      starting: (deviceId) => {
        if (deviceId === 'dev-3' && failures++ === 0) throw new Error('the session could not be loaded');
      },
    });
    await startedWithAll(a);
    expect((await a.store.readStream('lease-dev-3')).map((e) => e.type)).toEqual([
      'LeaseAcquired',
      'LeaseReleased',
      'LeaseAcquired',
    ]);
  });

  it('runs a device the log gives it even when the answer of its acquire was lost', async () => {
    const file = await location();
    let lost = false;
    const a = await member(file, 'a', undefined, {
      wrap: (store) =>
        new Proxy(store, {
          get(target, key, receiver) {
            if (key !== 'append') return Reflect.get(target, key, receiver) as unknown;
            return async (...args: Parameters<EventStore['append']>) => {
              const result = await target.append(...args);
              // Written, but the answer never comes back (a deadline, a connection that broke after the write).
              if (args[0] === 'lease-dev-5' && !lost) {
                lost = true;
                throw new Error('the answer was lost');
              }
              return result;
            };
          },
        }),
    });
    await startedWithAll(a);
    expect(lost).toBe(true);
    expect(a.leases.owns('dev-5')).toBe(true);
    expect((await a.store.readStream('lease-dev-5')).map((e) => e.type)).toEqual(['LeaseAcquired']);
  });

  it('runs no device it is handing back, while its last writes still carry the fence', async () => {
    const file = await location();
    const seen: Array<{ owns: boolean; fenced: boolean }> = [];
    const a = await member(file, 'a', undefined, {
      stopping: (deviceId, leases) =>
        seen.push({ owns: leases.owns(deviceId), fenced: leases.fence(deviceId) !== undefined }),
    });
    await startedWithAll(a);
    await a.leases.stop();
    expect(seen).toHaveLength(devices.length);
    expect(seen.every((s) => !s.owns && s.fenced)).toBe(true);
    expect(a.leases.fence('dev-0')).toBeUndefined();
  });

  it('closes a deleted device it runs before it releases it', async () => {
    const file = await location();
    const list = devices.slice(0, 4);
    const a = await member(file, 'a', undefined, { devices: list });
    await startedWithAll(a, 4);
    // Deleted: gone from the device list (which may show it before the log follower sees DeviceDeleted).
    list.splice(list.indexOf('dev-1'), 1);
    const leaseOf = async () => (await a.store.readStream('lease-dev-1')).map((e) => e.type).join();
    // Stopped, then released (the release is appended after the stop).
    await eventually(async () => (await leaseOf()) === 'LeaseAcquired,LeaseReleased', 'dev-1 released');
    expect(a.running.has('dev-1')).toBe(false);
    expect(a.deleted).toEqual(['dev-1']);
  });

  it('closes a device deleted while its owner was dead: a live member takes its lease, closes it and releases it', async () => {
    const file = await location();
    const list = devices.slice(0, 4);
    const deleted = new Set<string>();
    const clock = new TestClock({ running: true });
    const a = await member(file, 'a', undefined, { devices: list, deleted, clock });
    await startedWithAll(a, 4);
    const b = await member(file, 'b', undefined, { devices: list, deleted, clock });
    await b.leases.start();
    await eventually(() => a.running.size === 2 && b.running.size === 2, 'two each');
    const victim = [...a.running][0];
    await pause(a);
    // Deleted through b while a is dead: b does not own it, so nobody closes it yet.
    deleted.add(victim);
    list.splice(list.indexOf(victim), 1);
    const lastOfLease = async () => (await b.store.readStream(`lease-${victim}`)).at(-1)!;
    await clock.advance(TIMEOUT_MS);
    await eventually(
      async () => (await lastOfLease()).type === 'LeaseReleased',
      'the deleted device closed and released',
    );
    expect((await lastOfLease()).data).toMatchObject({ owner: 'b', reason: 'deleted' });
    expect(b.deleted).toEqual([victim]);
    expect(b.running.has(victim)).toBe(false);
    // b takes a's other device as usual, and nobody takes the deleted one again.
    await eventually(() => b.running.size === 3, 'b runs the three devices left');
    // However many of b's ticks go by (each looks at every lease).
    const ticks = vi.spyOn(b.leases as unknown as { tick(): Promise<void> }, 'tick');
    await eventually(() => ticks.mock.calls.length > 5, 'five more ticks of b');
    expect(b.deleted).toEqual([victim]);
    expect((await lastOfLease()).type).toBe('LeaseReleased');
  });

  it('keeps heartbeating and keeps its devices when the wall clock steps back or forward', async () => {
    const real = Date.now.bind(Date);
    let step = 0;
    // The wall clock as the process sees it, from before the member exists.
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => real() + step);
    try {
      const file = await location();
      const list = devices.slice(0, 2);
      const a = await member(file, 'a', undefined, { devices: list });
      await startedWithAll(a, 2);
      const heartbeats = async () =>
        (await a.store.readStream('member-a')).filter((e) => e.type === 'MemberHeartbeat').length;
      for (const change of [-3_600_000, 3_600_000]) {
        const before = await heartbeats();
        step = change;
        await eventually(
          async () => (await heartbeats()) >= before + 2,
          `heartbeats after a step of ${change / 1000} s`,
          3 * TIMEOUT_MS,
        );
        expect(a.leases.owned().sort()).toEqual([...list].sort());
        expect(a.lost).toEqual([]);
      }
    } finally {
      clock.mockRestore();
    }
  });

  it('spreads 4 devices over 3 members 2/1/1', async () => {
    const file = await location();
    const four = devices.slice(0, 4);
    const a = await member(file, 'a', undefined, { devices: four });
    await startedWithAll(a, 4);
    const b = await member(file, 'b', undefined, { devices: four });
    await b.leases.start();
    await eventually(() => a.running.size === 2 && b.running.size === 2, 'a fair share each');
    const c = await member(file, 'c', undefined, { devices: four });
    await c.leases.start();
    const counts = () =>
      [a, b, c]
        .map((m) => m.running.size)
        .sort()
        .join();
    await eventually(() => counts() === '1,1,2', 'every member runs one device at least');
    expect(overlap(a, b).concat(overlap(a, c), overlap(b, c))).toEqual([]);
  });

  it('forgets members that stopped heartbeating or left long ago', async () => {
    const file = await location();
    let skew = 0;
    const a = await member(file, 'a', () => Date.now() + skew);
    await a.leases.start();
    const b = await member(file, 'b');
    await b.leases.start();
    const c = await member(file, 'c');
    await c.leases.start();
    const members = () =>
      a.leases
        .distribution()
        .map((m) => m.memberId)
        .sort()
        .join();
    await eventually(() => members() === 'a,b,c', 'a sees b and c');
    await b.leases.stop();
    await pause(c); // c goes silent without leaving (kill -9): not even a tick already scheduled runs
    await eventually(() => members() === 'a,c', 'b left');
    // What a knows of the members (src/cluster/member-liveness.ts).
    const known = (a.leases as unknown as { liveness: unknown }).liveness as {
      seen: Map<string, number>;
      left: Map<string, number>;
      memberRevisions: Map<string, number>;
    };
    expect([...known.left.keys()]).toEqual(['b']);
    // c's last heartbeat seen by a: else a, reading c's stream before it takes c's devices, finds it moved since
    // and rightly counts c alive for another timeout.
    const [lastOfC] = await a.store.readStream('member-c', { direction: 'backwards', maxCount: 1 });
    await eventually(() => known.memberRevisions.get('c') === lastOfC.revision, "a saw c's last heartbeat");
    // And every lease event c wrote (its last tick may acquire after its last heartbeat): one seen only after a
    // forgot c would name c the owner of a lease, which gives it a full timeout again (src/cluster/device-leases.ts).
    const leasesKnown = (a.leases as unknown as { leases: Map<string, { revision: number; owner?: string }> }).leases;
    await eventually(async () => {
      for (const deviceId of devices) {
        const [last] = await a.store.readStream(`lease-${deviceId}`, { direction: 'backwards', maxCount: 1 });
        if (last && (leasesKnown.get(deviceId)?.revision ?? -1) < last.revision) return false;
      }
      return true;
    }, 'a saw every lease event');
    skew += 20 * TIMEOUT_MS;
    await eventually(() => {
      if (known.seen.size === 0 && known.left.size === 0) return true;
      const holders = [...leasesKnown.values()].map((lease) => lease.owner);
      throw new Error(JSON.stringify({ seen: [...known.seen], left: [...known.left], holders }));
    }, 'a forgot b and c');
    expect(members()).toBe('a');
  });
});

describe('a device just created', () => {
  it('is taken at an early tick (tickSoon), not at the next timed one', async () => {
    const clock = new TestClock();
    const list = ['old-1'];
    const a = await member(join(tempDir('dmg-leases-'), 'events.sqlite'), 'a', undefined, {
      devices: list,
      clock,
      tickMs: 1_000,
    });
    await startedWithAll(a, 1);
    list.push('new-1', 'new-2');
    // Created twice in a row (two DeviceCreated seen): one early tick for both.
    a.leases.tickSoon();
    a.leases.tickSoon();
    await clock.advance(20);
    await eventually(() => a.running.size === 3, 'the new devices run without the timed tick');
    expect(clock.pending().filter((due) => due <= clock.now() + 20)).toEqual([]);
  });
});

describe('device leases on EventStoreDB when the subscriptions to the log stall while appends work', () => {
  it('no device changes hands and none runs twice while the subscriptions are silent for 7.5 s (issue 31, reproduction 2)', async () => {
    const server = await startEsdbTestServer();
    cleanups.unshift({ stop: async () => undefined, close: () => server.stop() });
    // The members' time passes on the clock: the stall is as long as the test moves it on, not waited for.
    const clock = new TestClock({ running: true });
    const a = await member(server.url, 'a', undefined, { clock });
    await startedWithAll(a);
    const b = await member(server.url, 'b', undefined, { clock });
    await b.leases.start();
    await eventually(() => a.running.size === 6 && b.running.size === 6, 'a fair share each');
    const before = { a: [...a.running].sort(), b: [...b.running].sort(), lost: a.lost.length + b.lost.length };
    const heartbeats = () =>
      Promise.all(
        (['a', 'b'] as const).map(
          async (name) =>
            (await a.store.readStream(`member-${name}`)).filter((e) => e.type === 'MemberHeartbeat').length,
        ),
      );
    // Heartbeats are appended and read directly all along; only what the subscriptions bring stops, until the
    // test ends the stall (as the client's keep-alive would).
    server.blackHoleSubscriptions(Infinity);
    let sawBehind = false;
    for (let passed = 0; passed < 7_500 + 2 * TIMEOUT_MS; passed += TIMEOUT_MS / 4) {
      const [beforeA, beforeB] = await heartbeats();
      await clock.advance(TIMEOUT_MS / 4);
      await eventually(
        async () => {
          const [nowA, nowB] = await heartbeats();
          return nowA > beforeA && nowB > beforeB;
        },
        `a heartbeat of each after ${passed + TIMEOUT_MS / 4} ms`,
      );
      expect(overlap(a, b)).toEqual([]);
      sawBehind ||= a.leases.following().state === 'behind' && b.leases.following().state === 'behind';
    }
    server.endBlackHole();
    // Before: each took all 12 once the other looked silent, both ran them, then every device changed hands.
    expect([...a.running].sort()).toEqual(before.a);
    expect([...b.running].sort()).toEqual(before.b);
    expect(a.lost.length + b.lost.length).toBe(before.lost);
    expect(sawBehind).toBe(true);
    await eventually(
      () => a.leases.following().state === 'live' && b.leases.following().state === 'live',
      'both subscriptions live again',
    );
  }, 60_000);
});
