/**
 * Several processes on one store (docs/architecture.md, "Several processes"): the leases of this process
 * and the views of the store its owner-side components write through. Nothing here runs for a lone process.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Supervisor } from '../actors/supervisor.js';
import type { Config } from '../config.js';
import { deviceStream } from '../devices/device-events.js';
import type { EventStore, StoredEvent } from '../eventstore/event-store.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Sending } from '../outbox/sending.js';
import type { Webhooks } from '../webhooks/webhooks.js';
import { DeviceLeases } from './device-leases.js';
import { type SessionCommand, SessionRequests } from './session-requests.js';
import { type OwnerCalls, capped } from './owner-calls.js';
import type { CommandResult } from '../sessions/session-commands.js';
import type { Clock } from '../time/clock.js';
import {
  DeviceFencedStore,
  type FenceSource,
  StreamFencedStore,
  credentialDeviceOf,
  deviceOfStream,
} from './fenced-store.js';

export interface ClusterDeps {
  store: EventStore;
  log: Logger;
  devices: {
    list(options: { limit: number; after?: string }): { items: Array<{ id: string }>; nextAfter: string | null };
  };
  after: () => number;
  metrics: Metrics;
  /** The leases' timers and time (default: the system timers and the monotonic clock). */
  clock?: Clock;
  /** Engine-bound calls: carried to the owner of a device this process does not run, run here for those it does. */
  calls: OwnerCalls;
}

export interface ClusterNode {
  /** Credentials are written by the device's owner only, under its lease. */
  credentialStore: EventStore;
  /** Webhook lanes: the owner's records carry its lease. */
  laneStore: EventStore;
  supervisor: {
    storeFor: (deviceId: string) => EventStore;
    owns: (deviceId: string) => boolean;
    forward: (deviceId: string, command: SessionCommand) => Promise<ForwardedResult>;
  };
  owns: (deviceId: string) => boolean;
  /** The leases this process holds: the fence of each device's writes, told of each write refused. */
  fences: FenceSource;
  report: () => {
    memberId: string;
    pid: number;
    devicesOwned: number;
    members: Array<{ memberId: string; devices: number; self: boolean }>;
    subscription: { state: 'live' | 'behind'; behindMs: number };
  };
  start(parts: { sessions: Supervisor; webhooks: Webhooks; sending: Sending }): void;
  stop(): Promise<void>;
}

type ForwardedResult = CommandResult & {
  qr?: { code: string; expiresAt: string };
  pairing?: { code: string; expiresAt: string };
  moving?: boolean;
};

const DEVICE_IDS_REFRESH_MS = 2_000;
/** How long a call waits for a session that is connecting (resumed after a handover) to be online or not. */
const RESUME_WAIT_MS = 5_000;

/** Resolves once the device's session is no longer `connecting` here, `waitMs` at most. */
function resumed(sessions: Supervisor, deviceId: string, waitMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, waitMs));
    const unsubscribe = sessions.onStateChange((id, state) => {
      if (id === deviceId && state !== 'connecting') done();
    });
    if (sessions.state(deviceId) !== 'connecting') done();
  });
}
const PAGE = 1_000;

export function startLeases(config: Config, deps: ClusterDeps): ClusterNode | undefined {
  if (!config.cluster.leases) return undefined;
  const { store, log } = deps;
  let parts: { sessions: Supervisor; webhooks: Webhooks; sending: Sending } | undefined;
  let ids: string[] = [];
  let idsAt = 0;
  const deviceIds = () => {
    if (Date.now() - idsAt < DEVICE_IDS_REFRESH_MS) return ids;
    const all: string[] = [];
    let after: string | undefined;
    do {
      const page = deps.devices.list({ limit: PAGE, ...(after === undefined ? {} : { after }) });
      all.push(...page.items.map((item) => item.id));
      after = page.nextAfter ?? undefined;
    } while (after !== undefined);
    ids = all;
    idsAt = Date.now();
    return ids;
  };
  /**
   * A device created (seen in the log, perhaps before the read models show it): listed at once, so the next lease tick
   * takes it, not up to DEVICE_IDS_REFRESH_MS later (issue 30: a new device waited ~2 s for an owner, and its first
   * session command with it). Not an early tick of its own: every process ticking at each creation moved devices
   * about while a batch of them was set up (the cluster e2e tests saw owners change under CI load).
   */
  const created = (deviceId: string) => {
    if (!ids.includes(deviceId)) ids = [...ids, deviceId];
  };
  const memberId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const outboxOf = deviceOfStream('outbox-');
  const leases = new DeviceLeases({
    store,
    memberId,
    timeoutMs: config.cluster.leaseTimeoutMs,
    log: log.child({ component: 'leases', memberId }),
    devices: deviceIds,
    after: deps.after,
    ...(deps.clock ? { clock: deps.clock } : {}),
    async onAcquired(deviceId) {
      if (!parts) return;
      const adopted = parts.sessions.adopt(deviceId);
      adopting.set(
        deviceId,
        adopted.catch(() => undefined),
      );
      try {
        await adopted;
      } finally {
        adopting.delete(deviceId);
      }
      // Answered in the background: the calls pending for the device wait for its session and run on its engine, far
      // longer than a lease tick may take (the heartbeats are written between ticks).
      requests
        .adopt(deviceId)
        .catch((error: unknown) =>
          log.warn({ deviceId, err: error }, 'could not answer the requests pending for a device'),
        );
      parts.webhooks.wake(deviceId);
      // An outbox this process loaded before (an earlier lease, a send through it) missed what others appended since.
      parts.sending.outboxes.refresh(deviceId);
      parts.sending.drainer.kick(deviceId);
    },
    async onLost(deviceId) {
      await parts?.sessions.release(deviceId);
    },
    async onDeleted(deviceId) {
      await parts?.sessions.remove(deviceId);
    },
    async isDeleted(deviceId) {
      const [last] = await store.readStream(deviceStream(deviceId), { direction: 'backwards', maxCount: 1 });
      return last?.type === 'DeviceDeleted';
    },
    observe(events: readonly StoredEvent[]) {
      if (!parts) return;
      requests.observe(events);
      for (const event of events) {
        const deviceId = outboxOf(event.streamId);
        // Another process queued (or cancelled…) a message: an outbox loaded here takes it in (its owner's drainer too).
        if (deviceId !== undefined) parts.sending.outboxes.noteEvent(deviceId, event, leases.owns(deviceId));
        else if (event.type === 'DeviceCreated') created((event.data as { deviceId: string }).deviceId);
        else if (event.type === 'DeviceDeleted') {
          const deleted = (event.data as { deviceId?: string }).deviceId;
          if (deleted !== undefined && leases.owns(deleted)) void parts.sessions.remove(deleted).catch(() => undefined);
        }
      }
    },
  });
  const owns = (deviceId: string) => leases.owns(deviceId);
  /** Devices this process holds whose actors are still loading (their sessions resume once loaded). */
  const adopting = new Map<string, Promise<unknown>>();
  const requests = new SessionRequests(
    store,
    memberId,
    owns,
    async (deviceId, command) => {
      if (!parts) throw new Error('not started');
      const { sessions } = parts;
      if (command.type === 'open') return sessions.open(deviceId);
      if (command.type === 'close') return sessions.close(deviceId, { logout: command.logout });
      if (command.type === 'qr') {
        const { qr, state, moving } = await sessions.qr(deviceId);
        return { state: state ?? 'closed', changed: false, ...(qr ? { qr } : {}), ...(moving ? { moving } : {}) };
      }
      if (command.type === 'pair') return sessions.pair(deviceId, command.phone);
      if (command.type === 'call') {
        const value = await deps.calls.run(deviceId, command);
        return { state: sessions.state(deviceId) ?? 'closed', changed: false, value };
      }
      return sessions.reboot(deviceId);
    },
    log,
    {
      // Before a call is taken and run, within the time its asker has left: a device just taken over (processes
      // joining or leaving) is online again in a moment (not refused meanwhile), and the read models reach the
      // asker's position.
      async prepare(deviceId, command, timeLeftMs) {
        if (command.type !== 'call' || !parts) return;
        const until = Date.now() + timeLeftMs;
        await capped(adopting.get(deviceId), timeLeftMs);
        await resumed(parts.sessions, deviceId, Math.min(RESUME_WAIT_MS, until - Date.now()));
        await deps.calls.prepare(command, until - Date.now());
      },
    },
  );
  deps.calls.carryWith({
    elsewhere: (deviceId) => !owns(deviceId),
    carry: async (deviceId, call, timeoutMs) => {
      const { value, position } = await requests.ask(deviceId, call, { timeoutMs });
      return { value, ...(position === undefined ? {} : { position }) };
    },
  });
  deps.metrics.gauge(
    'dmg_cluster_devices_owned',
    'Devices each live process runs (holds the lease of), as this process sees them.',
    ['member', 'self'],
    () =>
      leases
        .distribution()
        .map(({ memberId: member, devices, self }) => ({ labels: { member, self: String(self) }, value: devices })),
  );
  deps.metrics.gauge(
    'dmg_cluster_subscription_behind_seconds',
    "How long this process's last heartbeat has not come back through its subscription to the log (0: live); past half of LEASE_TIMEOUT it takes no device.",
    [],
    () => [{ labels: {}, value: leases.following().behindMs / 1_000 }],
  );
  let started: Promise<void> | undefined;
  return {
    credentialStore: new StreamFencedStore(store, leases, credentialDeviceOf, true),
    laneStore: new StreamFencedStore(store, leases, deviceOfStream('webhooks-'), false),
    supervisor: {
      storeFor: (deviceId) => new DeviceFencedStore(store, deviceId, leases),
      owns,
      forward: async (deviceId, command) => {
        const outcome = await requests.ask(deviceId, command);
        return outcome as ForwardedResult;
      },
    },
    owns,
    fences: leases,
    report: () => ({
      memberId,
      pid: process.pid,
      devicesOwned: leases.owned().length,
      members: leases.distribution(),
      subscription: leases.following(),
    }),
    start(running) {
      parts = running;
      started = leases.start().catch((error: unknown) => log.error({ err: error }, 'device leases could not start'));
    },
    async stop() {
      await started;
      await leases.stop();
    },
  };
}
