/**
 * GATEWAY_PROCESSES=N: the machine's one projector, run by the node:cluster primary. It feeds every read model
 * (the API's and the webhooks') into one file, read-models.sqlite, which every worker opens and serves from:
 * each event is applied once per machine, not once per process (docs/architecture.md, "Several processes").
 * After each committed batch it tells the workers what the read models with cached views changed (by model and
 * key: a device, a webhook scope such as `_global`, a key hash; those views go), how far it got, and which lanes
 * have webhook deliveries to work off; a worker answers a request once the position of its append is reached,
 * as it did with read models of its own (read-your-writes). It records the key uses the workers send it.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { LookupCache } from '../contacts/lookup-cache.js';
import { withCurrentSchemas } from '../event-schemas.js';
import type { EventStore } from '../eventstore/event-store.js';
import { openEventStore } from '../eventstore/open-event-store.js';
import { ProjectionRunner } from '../projections/projection-runner.js';
import { type ChangedMessage, type ProjectedMessage, isKeyUseMessage } from '../projections/projector-link.js';
import { READ_MODEL_FILE, openReadModelDb } from '../projections/read-model-db.js';
import { createReadModels } from '../read-models.js';
import { type Clock, type ClockTimer, systemClock } from '../time/clock.js';
import { HookSecrets } from '../webhooks/hook-secrets.js';
import { WebhooksReadModel } from '../webhooks/webhooks-read-model.js';

const PRUNE_EVERY_MS = 3_600_000;
/**
 * The workers' commits are read at most this often: under load the projector then applies several workers'
 * commits as one batch (one read-model transaction, each row written once) instead of one small batch per commit,
 * which cost it about 2.5 times as much per event as a lone gateway's projection (issue 30); a commit after a quiet
 * spell is still read at once. A request's read-your-writes wait grows by at most this much under load. 10 ms rather
 * than 5: batches twice as large, about 10 % less of the projector's CPU per send and fewer `projected` messages for
 * the workers to handle (docs/architecture.md, "The projector's read interval").
 */
const TAIL_INTERVAL_MS = 10;
/** How often a change of the runners' failing state is told, when no batch tells it. */
const STATUS_EVERY_MS = 1_000;

export interface MachineProjector {
  /** Whatever the workers should hear: every message goes to each of them. */
  onMessage: ((message: ProjectedMessage | ChangedMessage) => void) | undefined;
  /** The status now, for a worker that says hello (nothing about changes: it has no cached views yet). */
  status(): ProjectedMessage;
  /** A message from a worker (its key uses; anything else is not the projector's). */
  receive(message: unknown): void;
  stop(): Promise<void>;
}

/** Opens the store and the machine's read models, catches up with the log, then follows it. */
export async function startMachineProjector(
  config: Config,
  log: Logger,
  clock: Clock = systemClock,
): Promise<MachineProjector> {
  const projectorLog = log.child({ component: 'projector' });
  const store: EventStore = withCurrentSchemas(
    await openEventStore(config, {
      log: projectorLog,
      startupTimeoutMs: Number.POSITIVE_INFINITY,
      tailIntervalMs: TAIL_INTERVAL_MS,
    }),
  );
  const db = openReadModelDb(config.dataDir, READ_MODEL_FILE);
  // The contact lookups' cache lives in the file too (written by the device's owner): made here, before any worker.
  new LookupCache(db);
  const readModels = createReadModels(db, store, projectorLog, {
    otherWriters: true,
    encryptionKey: config.encryptionKey,
  });
  const main = new ProjectionRunner(store, db, readModels.projections, projectorLog);
  const hooksModel = new WebhooksReadModel(db, new HookSecrets(config.encryptionKey));
  // Two runners, as in a lone gateway: webhook bookkeeping never delays the API's read-your-writes.
  const hooks = new ProjectionRunner(store, db, [hooksModel], projectorLog.child({ runner: 'webhooks' }));

  /**
   * `changed`: by read model, the keys whose cached views the workers drop; `work`: by lane (device and webhook,
   * joined by a NUL), whether older records came back.
   */
  let pending: { changed: Map<string, Set<string>>; work: Map<string, boolean> } | undefined;
  let lastFailing = false;
  const projector: MachineProjector = {
    onMessage: undefined,
    status: () => ({
      dmg: 'projected',
      main: main.position,
      webhooks: hooks.position,
      failing: main.failing || hooks.failing,
      work: [],
    }),
    receive: (message) => {
      if (isKeyUseMessage(message)) readModels.keys.usage.note(message.uses);
    },
    stop: async () => {
      clock.clear(pruner);
      clock.clear(statusTimer);
      readModels.keys.usage.stop();
      await hooks.stop();
      await main.stop();
      await store.close();
      db.close();
    },
  };
  const tell = () => {
    if (pending) return;
    pending = { changed: new Map(), work: new Map() };
    // Coalesced: one message for what the runners commit in a turn of the event loop.
    setImmediate(() => {
      const batch = pending!;
      pending = undefined;
      const message = projector.status();
      lastFailing = message.failing;
      message.work = [...batch.work].map(([lane, rewound]) => {
        const [deviceId = '', webhookId = ''] = lane.split('\u0000');
        return [deviceId, webhookId, rewound];
      });
      const keys: ChangedMessage['keys'] = [];
      for (const [model, changed] of batch.changed) for (const key of changed) keys.push([model, key]);
      // First, on the same channel: the views go before the position releases any request.
      if (keys.length > 0) projector.onMessage?.({ dmg: 'changed', keys });
      projector.onMessage?.(message);
    });
  };
  const changed = (model: string, key: string) => {
    tell();
    const keys = pending!.changed.get(model);
    if (keys) keys.add(key);
    else pending!.changed.set(model, new Set([key]));
  };
  // The devices, groups and settings read models drop a device's cached view on every event they handle (by its
  // deviceId).
  const byDevice = [readModels.devices, readModels.groups, readModels.settings];
  main.onCommitted = (events) => {
    tell();
    for (const event of events) {
      for (const model of byDevice) {
        if (!model.handles.has(event.type)) continue;
        const deviceId = (event.data as { deviceId?: unknown } | null)?.deviceId;
        if (typeof deviceId === 'string') changed(model.name, deviceId);
      }
    }
  };
  hooks.onCommitted = () => tell();
  // Those two say which keys they changed: a webhook scope (a device, or `_global`) and a scoped key's hash.
  hooksModel.onChanged = (scope) => changed(hooksModel.name, scope);
  readModels.keys.onChanged = (keyHash) => changed(readModels.keys.name, keyHash);
  hooksModel.onWork = (deviceId, webhookId, rewound) => {
    tell();
    const lane = `${deviceId}\u0000${webhookId}`;
    pending!.work.set(lane, rewound || pending!.work.get(lane) === true);
  };
  await main.start();
  await hooks.start();
  const prune = () => {
    const removed = hooksModel.prune(clock.now() - config.webhooks.retentionMs);
    if (removed > 0) projectorLog.info({ removed }, 'pruned old webhook delivery records');
  };
  prune();
  const pruner: ClockTimer = clock.setInterval(prune, PRUNE_EVERY_MS).unref();
  // A failure (or the recovery from it) with no batch to carry it.
  const statusTimer: ClockTimer = clock
    .setInterval(() => {
      if ((main.failing || hooks.failing) !== lastFailing) tell();
    }, STATUS_EVERY_MS)
    .unref();
  projectorLog.info({ position: main.position }, 'read models caught up; following the log');
  return projector;
}
