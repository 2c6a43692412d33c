/**
 * Sending, wired in two steps: SendingCore (the outbox read models, registered with the projection
 * runner before it starts, and the outboxes, which the device actors' receipts go through), then, once
 * the read models are caught up, startSending: the drainer, the media store and the send commands.
 */
import type Database from 'better-sqlite3';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { newWaMessageId } from '../messages/message-id.js';
import type { EventStore } from '../eventstore/event-store.js';
import { IdempotencyKeys } from './commands/idempotency-keys.js';
import { IdempotencyReadModel } from './read-models/idempotency-read-model.js';
import { MediaFetcher } from '../media/media-fetcher.js';
import { MediaIntake } from '../media/media-intake.js';
import { MediaStore } from '../media/media-store.js';
import type { OutboundGuard } from '../net/outbound-guard.js';
import type { Projection } from '../projections/projection.js';
import type { ReadBarrier } from '../projections/read-barrier.js';
import type { ReadModelFeed } from '../projections/projection-runner.js';
import { DeletedDeviceOutboxes } from './commands/deleted-device-outboxes.js';
import type { DeviceConnections } from './drain/device-connections.js';
import { MessageDispatcher } from './drain/message-dispatcher.js';
import { OutboxDrainer, type OutboxDrainerDeps } from './drain/outbox-drainer.js';
import { OutboxExpiry } from './commands/outbox-expiry.js';
import { OutboxReadModel } from './read-models/outbox-read-model.js';
import { OutboxReceipts } from './commands/outbox-receipts.js';
import { Outboxes } from './stream/outboxes.js';
import { SendCommands } from './commands/send-commands.js';
import type { SeenMessages } from './commands/seen-messages.js';
import { CombinedProjection } from './read-models/sending-projection.js';
import { type Clock, systemClock } from '../time/clock.js';
import type { PacingContexts } from './pacing/pacing-contexts.js';

/**
 * What must exist before the device actors and the projection runner start: the outbox read models (the
 * runner feeds them) and the outboxes (receipts from the actors' engines are recorded through them, `receipts`).
 */
export class SendingCore {
  readonly outboxView: OutboxReadModel;
  readonly idempotencyView: IdempotencyReadModel;
  readonly outboxes: Outboxes;
  /** The message sink's receipt writer: receipts are recorded by the outbox, the one writer of its stream. */
  readonly receipts: OutboxReceipts;

  /** `otherWriters`: several processes append to the outbox streams (leases on). */
  constructor(db: Database.Database, store: EventStore, log: Logger, otherWriters = false) {
    this.outboxView = new OutboxReadModel(db);
    this.idempotencyView = new IdempotencyReadModel(db);
    this.outboxes = new Outboxes(store, log, undefined, otherWriters);
    this.receipts = new OutboxReceipts(this.outboxes, this.outboxView);
  }

  get projections(): Projection[] {
    return [new CombinedProjection('sending', [this.outboxView, this.idempotencyView])];
  }
}

export interface SendingDeps {
  config: Pick<Config, 'dataDir' | 'outbox' | 'media' | 'idempotencyTtlMs' | 'server'> & {
    cluster?: Config['cluster'];
  };
  store: EventStore;
  /** Already started: the read models are caught up. */
  projections: ReadModelFeed;
  /** Read-your-writes on the read side, where the store allows it (src/projections/read-barrier.ts). */
  readBarrier?: ReadBarrier;
  core: SendingCore;
  /** Whether a device exists now (the devices read model). */
  deviceExists: (deviceId: string) => boolean;
  connections: DeviceConnections;
  guard: OutboundGuard;
  log: Logger;
  /** Messages the device has seen (replies, forwards, edits). */
  seen?: SeenMessages;
  /** Where a received message's media is kept (forwards copy it). */
  receivedMediaPath?: (deviceId: string, waMessageId: string) => string;
  /** Several processes: the lease each device's tries are recorded under (see OutboxDrainerDeps). */
  fences?: OutboxDrainerDeps['fences'];
  /** The time messages are queued, tried and expired by (default: the system clock). */
  clock?: Clock;
  /** Pacing (src/outbox/pacing): what the drainer and the send commands ask before a send. */
  pacing?: PacingContexts;
  /** A status's default audience: the numbers the account exchanged messages with. */
  statusAudience?: (deviceId: string) => string[];
  /** The participants of a group as the groups read model knows them (`mentions: "all"`). */
  groupMembers?: (deviceId: string, groupId: string) => string[] | undefined;
  /** The account's role in a channel as the channels read model knows it (posts: owners and admins only). */
  channelRole?: (deviceId: string, channelId: string) => string | undefined;
}

export interface Sending {
  /** The commands of the /send and /outbox routes. */
  sends: SendCommands;
  media: MediaStore;
  outboxes: Outboxes;
  drainer: OutboxDrainer;
  /** Stops draining (tries under way record their outcome first, within a grace period). */
  stop(): Promise<void>;
}

export async function startSending(deps: SendingDeps): Promise<Sending> {
  const { config, store, projections, core, log } = deps;
  const { outboxes, outboxView } = core;
  const clock = deps.clock ?? systemClock;
  const media = new MediaStore(config.dataDir, config.cluster?.leases ? { worker: config.cluster.worker } : {});
  await media.init();
  // Before anything is queued: media of messages no longer waiting (or never queued) leaves the disk.
  const swept = await media.sweep((deviceId, outboxId) => outboxView.isPending(deviceId, outboxId));
  if (swept > 0) log.info({ files: swept }, 'removed media no outbox message waits for');

  const sends = new SendCommands({
    outboxes,
    projections,
    ...(deps.readBarrier ? { readBarrier: deps.readBarrier } : {}),
    outboxView,
    idempotency: new IdempotencyKeys(core.idempotencyView, config.idempotencyTtlMs),
    intake: new MediaIntake(media, config.media, deps.guard),
    media,
    newWaMessageId: () => newWaMessageId(),
    now: () => clock.now(),
    ...(config.outbox.messageTtlMs === undefined ? {} : { messageTtlMs: config.outbox.messageTtlMs }),
    ...(deps.seen ? { seen: deps.seen } : {}),
    ...(deps.receivedMediaPath ? { receivedMediaPath: deps.receivedMediaPath } : {}),
    ...(deps.pacing ? { unanswered: deps.pacing.unanswered.bind(deps.pacing) } : {}),
    ...(deps.groupMembers ? { groupMembers: deps.groupMembers } : {}),
    ...(deps.channelRole ? { channelRole: deps.channelRole } : {}),
    ...(deps.statusAudience ? { statusAudience: deps.statusAudience } : {}),
  });
  const drainer = new OutboxDrainer({
    outboxes,
    connections: deps.connections,
    dispatcher: new MessageDispatcher(media, new MediaFetcher(deps.guard, config.media.fetchTimeoutMs), config.media),
    media,
    settings: config.outbox,
    log,
    clock,
    ...(deps.fences ? { fences: deps.fences } : {}),
    ...(deps.pacing ? { pacing: deps.pacing.of.bind(deps.pacing) } : {}),
  });
  const waiting = outboxView.devicesWithPending();
  const deletions = new DeletedDeviceOutboxes({ store, outboxes, media, log });
  deletions.start(projections.position, waiting, deps.deviceExists);
  drainer.start(waiting.filter(deps.deviceExists));
  const expiry = new OutboxExpiry({ outboxes, outboxView, media, log, clock });
  expiry.start();

  return {
    sends,
    media,
    outboxes,
    drainer,
    async stop() {
      await drainer.stop();
      await expiry.stop();
      await deletions.stop();
    },
  };
}
