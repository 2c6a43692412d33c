import type { AddressInfo } from 'node:net';
import { SESSION_STATES } from './sessions/session-events.js';
import { MESSAGE_STATUSES } from './messages/message-events.js';
import { holdGatewayLock } from './storage/data-dir-lock.js';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { Supervisor } from './actors/supervisor.js';
import { loadOrCreateAdminKey } from './auth/admin-key.js';
import { Authenticator } from './auth/authenticator.js';
import type { Config } from './config.js';
import { DeviceRegistry, createDeviceCommands } from './devices/device-registry.js';
import { withCurrentSchemas } from './event-schemas.js';
import type { EventStore } from './eventstore/event-store.js';
import { openEventStore } from './eventstore/open-event-store.js';
import { createHttpApp } from './http/app.js';
import { deviceLookup } from './http/device-lookup.js';
import { TrustedProxies } from './http/client-address.js';
import { listen } from './http/http-server.js';
import { createEngines } from './engines/engines.js';
import { createLogger } from './logger.js';
import { ReaderThreads } from './storage/reader-threads.js';
import { StorageHealth } from './storage/storage-health.js';
import { OutboundGuard } from './net/outbound-guard.js';
import cluster from 'node:cluster';
import { DEFAULT_WAIT_TIMEOUT_MS, ProjectionRunner, type ReadModelFeed } from './projections/projection-runner.js';
import { READ_MODEL_FILE, openReadModelDb } from './projections/read-model-db.js';
import { ProjectorLink, primaryChannel } from './projections/projector-link.js';
import { ReadBarrier } from './projections/read-barrier.js';
import { SqliteEventStore } from './eventstore/sqlite/sqlite-event-store.js';
import { EventMetrics } from './metrics/event-metrics.js';
import { InstrumentedStore } from './metrics/instrumented-store.js';
import { Metrics } from './metrics/metrics.js';
import { createReadModels } from './read-models.js';
import { StatusReceipts } from './status/status-receipts.js';
import { Webhooks } from './webhooks/webhooks.js';
import { startSending } from './outbox/sending.js';
import { createLinkPreviewProvider } from './media/link-preview.js';
import { StoreMessageSink } from './actors/message-sink.js';
import { InboxCommands } from './inbox/inbox-commands.js';
import { ContactsCommands } from './contacts/contacts-commands.js';
import { OwnerCalls } from './cluster/owner-calls.js';
import type { EngineDependencies, Engines } from './engines/engines.js';
import { EventStreamHub } from './stream/event-stream-hub.js';
import { MediaRetention } from './chats/media-retention.js';
import { MESSAGE_INDEX_READER_ENTRY, messageIndexReads } from './chats/message-index-reads.js';
import {
  DEFAULT_BACKGROUND_RETRY_DELAYS_MS,
  DEFAULT_QUICK_RETRY_DELAYS_MS,
  InboundMediaSink,
} from './media/inbound-media.js';
import { InboundMediaStore } from './media/inbound-media-store.js';
import { startLeases } from './cluster/cluster-wiring.js';
import { readModelFileOf } from './projections/read-model-db.js';
import { GroupCommands } from './groups/group-commands.js';
import { ChannelCommands } from './channels/channel-commands.js';
import { AccountCommands } from './account/account-commands.js';
import { StreamTickets } from './auth/stream-tickets.js';
import { startOutputs } from './wiring/outputs.js';
import { type Clock, systemClock } from './time/clock.js';
import { PacingContexts } from './outbox/pacing/pacing-contexts.js';
import { PacingStatuses } from './outbox/pacing/pacing-status.js';
import type { Watchdog } from './watchdog/watchdog.js';
import { startWatchdog } from './wiring/watchdog.js';
import { apiRoutes } from './http/api-routes.js';

export interface GatewayOptions {
  logger?: Logger;
  /** Check every answer against its schema (tests). */
  validateResponses?: boolean;
  /** Replaces createEngines (tests drive the Baileys engine through a fake socket). */
  engines?: (dependencies: EngineDependencies) => Engines;
  /** Wraps the opened store (tests make its writes fail for a while). */
  wrapStore?: (store: EventStore) => EventStore;
  /** The built dashboard (default dist/dashboard; tests build it elsewhere). */
  dashboardDir?: string;
  /**
   * Where time passes (media retention, outbox expiry, webhook retries, leases, the read models' wait): tests
   * move it on instead of waiting. Default: the system clock (and the monotonic clock for leases).
   */
  clock?: Clock;
}

export interface Gateway {
  url: string;
  adminKey: string;
  store: EventStore;
  projections: ReadModelFeed;
  webhooks: Webhooks;
  /** The device actors: session commands, live connections, state changes. */
  sessions: Supervisor;
  /** The live event stream's fan-out. */
  stream: EventStreamHub;
  /** Engine-bound calls, carried to a device's owner with several processes (tests carry them elsewhere). */
  calls: OwnerCalls;
  /** The session watchdog (tests see what it follows). */
  watchdog: Watchdog;
  close(): Promise<void>;
}

/** The snapshot /health writes while the last write failed, to see whether writing works again (src/storage/storage-health.ts). */
const HEALTH_PROBE_STREAM = 'gateway-health-probe';

/** Wires the store, read models, commands and HTTP together and starts listening. */
export async function startGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const startedAt = Date.now();
  const clock = options.clock ?? systemClock;
  const log = options.logger ?? createLogger(config.logLevel);
  // Refused while `npm run rebuild` rewrites the read models (the rebuild is refused while this is held), and
  // while another gateway runs on this data directory, unless both share its devices through leases.
  const dataDirLock = holdGatewayLock(config.dataDir, {
    leases: config.cluster.leases,
    readModels: readModelFileOf(config.cluster.worker),
    worker: config.cluster.worker,
  });
  const metrics = new Metrics();
  // `projections` is assigned below, before any request can ask for health.
  const storage = new StorageHealth(config.dataDir, config.diskFreeMinBytes, () => projections.failing);
  const opened = await openEventStore(config, {
    log,
    startupTimeoutMs: Number.POSITIVE_INFINITY,
    // The primary checkpoints the file (its projector holds it open): one checkpointing thread for it per machine.
    checkpointedElsewhere: servesFromProjector(config),
  });
  const store = withCurrentSchemas(
    new InstrumentedStore(options.wrapStore ? options.wrapStore(opened) : opened, metrics, (error) =>
      storage.noteWrite(error),
    ),
  );
  storage.probeWrite = () =>
    store.saveSnapshot(HEALTH_PROBE_STREAM, { revision: 0, state: { checkedAt: new Date().toISOString() } });
  // A worker of GATEWAY_PROCESSES serves from the read models the machine's projector (its primary) writes.
  const link = servesFromProjector(config)
    ? new ProjectorLink(primaryChannel(), log, DEFAULT_WAIT_TIMEOUT_MS, clock)
    : undefined;
  // The file is set up by the projector: opened once it has answered (caught up with the log).
  await link?.start();
  const readModelDb = link
    ? openReadModelDb(config.dataDir, READ_MODEL_FILE, { follower: true })
    : openReadModelDb(config.dataDir, readModelFileOf(config.cluster.worker));
  const readModels = createReadModels(readModelDb, store, log, {
    otherWriters: config.cluster.leases,
    encryptionKey: config.encryptionKey,
  });
  const { devices, sending: sendingCore, messages } = readModels;
  // Chat pages run on threads of their own, reading the same file (docs/architecture.md, "Reads on threads of their own").
  const messageReads = new ReaderThreads({
    entry: MESSAGE_INDEX_READER_ENTRY,
    file: readModelDb.name,
    threads: config.readThreads,
    local: messageIndexReads(messages),
    onFailure: (error) =>
      log.warn({ err: error }, 'a reader thread failed: chat pages are read on the event loop for 5 s'),
  });
  const projections: ReadModelFeed =
    link?.main ?? new ProjectionRunner(store, readModelDb, readModels.projections, log, DEFAULT_WAIT_TIMEOUT_MS, clock);
  if (link) {
    // The cached views the projector's batches change, by read model and key (src/cluster/machine-projector.ts).
    link.onChanged(devices.name, (deviceId) => devices.forget(deviceId));
    link.onChanged(readModels.groups.name, (deviceId) => readModels.groups.forget(deviceId));
    link.onChanged(readModels.keys.name, (keyHash) => readModels.keys.forget(keyHash));
    link.onChanged(readModels.settings.name, (deviceId) => readModels.settings.forget(deviceId));
    // A worker writes no key usage: the projector records it.
    readModels.keys.usage.sink = (uses) => link.sendKeyUses(uses);
  }
  await projections.start();
  // Read-your-writes: sends answer at their commit and requests wait for the log's head, where the store can tell it.
  const readBarrier = new ReadBarrier({
    feed: projections,
    ...(opened instanceof SqliteEventStore ? { head: () => opened.headPosition() } : {}),
  });
  metrics.gauge(
    'dmg_devices',
    'Devices by session state.',
    ['state'],
    () => devices.countByState().map(({ state, count }) => ({ labels: { state }, value: count })),
    SESSION_STATES.map((state) => ({ state })),
  );
  metrics.gauge(
    'dmg_outbox_depth',
    'Messages in the outboxes of all devices, queued or being sent.',
    ['status'],
    () => sendingCore.outboxView.depth().map(({ status, count }) => ({ labels: { status }, value: count })),
    [{ status: 'queued' }, { status: 'sending' }],
  );
  metrics.countedBy(
    'dmg_chat_pages_total',
    'Chat pages read, on a reader thread or on the event loop.',
    ['where'],
    () => [
      { labels: { where: 'thread' }, value: messageReads.answered.thread },
      { labels: { where: 'loop' }, value: messageReads.answered.local },
    ],
  );
  metrics.gauge('dmg_reader_threads_ready', 'Reader threads ready to take chat pages (READ_THREADS).', [], () => [
    { labels: {}, value: messageReads.readyThreads },
  ]);
  metrics.zeroCounters([
    {
      counter: metrics.messageStatuses,
      label: 'status',
      values: MESSAGE_STATUSES.filter((status) => status !== 'queued'),
    },
  ]);
  const eventMetrics = new EventMetrics(metrics);
  eventMetrics.start(store, projections.position, log);

  const adminKey = loadOrCreateAdminKey(config.adminApiKey, config.dataDir, log);
  // Calls that need a device's live connection: with several processes, served by the device's owner.
  const calls = new OwnerCalls({
    position: () => projections.position,
    settle: (position) => projections.settle(position),
    recordedState: (deviceId) => devices.sessionState(deviceId),
  });
  // Several processes: devices are run under leases (src/cluster); undefined for a lone process.
  const cluster = startLeases(config, {
    store,
    log,
    devices,
    after: () => projections.position,
    metrics,
    calls,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const deviceCommands = createDeviceCommands(store);
  const registry = new DeviceRegistry(
    deviceCommands,
    projections,
    (deviceId) => devices.get(deviceId)?.session,
    config.defaultEngine,
  );
  // One guard for every URL a user chooses (webhook receivers, media, link previews): it checks the address actually dialled.
  const outboundGuard = new OutboundGuard({ allowPrivateNetworks: config.webhookAllowPrivateNetworks });
  const engines = (options.engines ?? createEngines)({
    store: cluster ? cluster.credentialStore : store,
    config,
    log,
    linkPreview: createLinkPreviewProvider(outboundGuard),
    // A sandbox device that comes online gets the receipts still owed to what it sent (also after a restart).
    unconfirmedSends: (deviceId, page) => sendingCore.outboxView.unconfirmed(deviceId, page),
    polls: async (deviceId, pollMessageId) => messages.poll(deviceId, pollMessageId),
    deviceSettings: (deviceId) => readModels.settings.get(deviceId),
  });
  // Receipts are recorded by the outbox (the one writer of its stream), with the message's outboxId.
  // The engine's contact reports become ContactsUpdated events (the contacts read model is fed from the log).
  const contactsCommands = new ContactsCommands(store, (err, streamId) =>
    log.warn({ err, streamId }, 'could not save a contacts snapshot'),
  );
  // Received media are downloaded before the message is recorded, so that its webhook carries a working URL.
  const receivedMedia = new InboundMediaStore(config.dataDir);
  // The inbox stream's one writer: inbound messages and chat activity, also the read receipts and late
  // media downloads the gateway records itself.
  const inbox = new InboxCommands(store);
  const sink = new InboundMediaSink(
    new StoreMessageSink(
      store,
      new StatusReceipts(sendingCore.receipts, readModels.statuses, inbox),
      contactsCommands.listener,
      inbox,
      contactsCommands.identitiesListener,
    ),
    receivedMedia,
    inbox,
    {
      enabled: config.inboundMedia.enabled,
      maxBytes: config.media.maxBytes,
      fileMaxBytes: config.media.fileMaxBytes,
      quickRetryDelaysMs: DEFAULT_QUICK_RETRY_DELAYS_MS,
      backgroundRetryDelaysMs: DEFAULT_BACKGROUND_RETRY_DELAYS_MS,
    },
    log,
    (deviceId, waMessageId) => messages.find(deviceId, waMessageId) !== undefined,
  );
  const retention = new MediaRetention(messages, receivedMedia, config.inboundMedia.retentionMs, log, clock);
  retention.start();
  // The session's state as this process knows best (its actor, else the read model), for the words of refusals.
  const sessionStateOf = (deviceId: string) => sessions.state(deviceId) ?? devices.sessionState(deviceId);
  // Groups: one writer of each device's groups stream, for its own changes and the network's reports.
  const groupCommands: GroupCommands = new GroupCommands({
    store,
    groups: readModels.groups,
    projections,
    operations: (deviceId) => sessions.connection(deviceId)?.groups,
    me: (deviceId) => sessions.account(deviceId)?.phone,
    sessionState: sessionStateOf,
    log,
  });
  const sessions: Supervisor = new Supervisor({
    store,
    engines,
    devices,
    reconnect: config.reconnect,
    log,
    sink,
    groupReports: (deviceId, report) => groupCommands.report(deviceId, report),
    channelReports: (deviceId, report) => channelCommands.report(deviceId, report),
    clock,
    ...(cluster ? { cluster: cluster.supervisor } : {}),
  });
  const groups = calls.serve('groups', groupCommands, {
    list: 'repeatable',
    get: 'repeatable',
    create: 'once',
    update: 'once',
    participants: 'once',
    inviteCode: 'repeatable',
    revokeInvite: 'once',
    join: 'once',
    leave: 'once',
    pictureUrl: 'repeatable',
    setPicture: 'once',
    joinRequests: 'repeatable',
    answerJoinRequests: 'once',
  });
  // Channels (newsletters): one writer of each device's channels stream; the routes are served by the device's owner.
  const channelCommands = new ChannelCommands({
    store,
    channels: readModels.channels,
    projections,
    operations: (deviceId) => sessions.connection(deviceId)?.channels,
    sessionState: sessionStateOf,
  });
  const channels = calls.serve('channels', channelCommands, {
    list: 'repeatable',
    get: 'repeatable',
    create: 'once',
    update: 'once',
    follow: 'once',
    unfollow: 'once',
    resolve: 'repeatable',
    messages: 'repeatable',
    react: 'repeatable',
  });
  const accountCommands = new AccountCommands({
    store,
    blocklist: readModels.blocklist,
    projections,
    operations: (deviceId) => sessions.connection(deviceId)?.profileOps,
    me: (deviceId) => sessions.account(deviceId)?.phone,
    sessionState: sessionStateOf,
  });
  // Each time a session comes online, its groups and blocklist are refreshed from the network (what changed while it was away).
  sessions.onStateChange((deviceId, state) => {
    if (state !== 'online') return;
    void groupCommands
      .refresh(deviceId)
      .catch((error: unknown) => log.warn({ deviceId, err: error }, 'could not refresh the groups from the network'));
    void channelCommands
      .refresh(deviceId)
      .catch((error: unknown) => log.warn({ deviceId, err: error }, 'could not refresh the channels from the network'));
    void accountCommands
      .refresh(deviceId)
      .catch((error: unknown) =>
        log.warn({ deviceId, err: error }, 'could not refresh the blocklist from the network'),
      );
  });
  const webhooks = await Webhooks.start({
    settings: config.webhooks,
    store: cluster ? cluster.laneStore : store,
    readModelDb,
    deviceCommands,
    encryptionKey: config.encryptionKey,
    guard: outboundGuard,
    log,
    clock,
    ...(cluster ? { owns: cluster.owns } : {}),
    ...(link ? { followed: { feed: link.webhooks, onWork: (wake) => (link.onWork = wake) } } : {}),
  });
  // By scope: a device id, or `_global` for the global webhooks.
  if (link) link.onChanged('webhooks', (scope) => webhooks.forgetHook(scope));
  // Pacing: the device's settings, its first link and what the message index knows of a recipient.
  const pacing = new PacingContexts(store, readModels.settings, readModelDb, () => clock.now());
  // A status's default audience: the numbers of the account's direct chats (the message index's chats).
  const contactNumbers = readModelDb.prepare<[string], { chat_id: string }>(
    "SELECT chat_id FROM chats WHERE device_id = ? AND chat_id GLOB '[0-9]*' AND chat_id NOT GLOB '*[^0-9]*'",
  );
  const sending = await startSending({
    config,
    store,
    projections,
    readBarrier,
    core: sendingCore,
    // The cached row's key hash: no JSON parsing on the send path.
    deviceExists: (deviceId) => devices.keyHashOf(deviceId) !== undefined,
    // The supervisor: live connections of online devices and every session state change.
    connections: sessions,
    guard: outboundGuard,
    log,
    seen: messages,
    receivedMediaPath: (deviceId, waMessageId) => receivedMedia.pathOf(deviceId, waMessageId),
    statusAudience: (deviceId) => contactNumbers.all(deviceId).map((row) => row.chat_id),
    groupMembers: (deviceId, groupId) =>
      readModels.groups.get(deviceId, groupId, undefined)?.participants.map((p) => p.number),
    channelRole: (deviceId, channelId) => readModels.channels.roleOf(deviceId, channelId),
    clock,
    pacing,
    ...(cluster ? { fences: cluster.fences } : {}),
  });
  const pacingStatuses = new PacingStatuses(sending.outboxes, pacing, () => clock.now());

  // The session watchdog: online sessions that hear nothing while they send (WATCHDOG_SILENCE, WATCHDOG_REBOOT).
  const watchdog = startWatchdog({
    store,
    log,
    clock,
    settings: config.watchdog,
    sessions,
    health: readModels.health,
    metrics,
    after: projections.position,
  });

  // The live stream starts where the read models are; clients that name an older position read it from the log.
  const stream = new EventStreamHub(store, { ...config.stream, log });
  stream.start(projections.position);

  // Broker outputs (RabbitMQ, NATS JetStream): subscribers of the log, run by one process of the machine.
  const { commands: outputCommands, outputs } = startOutputs({
    store,
    outputs: readModels.outputs,
    projections,
    log,
    clock,
    metrics,
    encryptionKey: config.encryptionKey,
    retryMaxDelayMs: config.outputs.retryMaxDelayMs,
    worker: config.cluster.worker,
  });

  const tickets = new StreamTickets(store, adminKey, () => clock.now());
  const requestDevices = deviceLookup({ devices, sessions });
  const routes = apiRoutes({
    config,
    dashboardDir: options.dashboardDir,
    startedAt,
    clock,
    store,
    readModels,
    readModelDb,
    messageReads,
    projections,
    storage,
    metrics,
    cluster,
    registry,
    deviceCommands,
    sessions,
    engines,
    calls,
    outboundGuard,
    webhooks,
    stream,
    tickets,
    requestDevices,
    outputCommands,
    outputs,
    sending,
    pacingStatuses,
    groups,
    channels,
    accountCommands,
    inbox,
    receivedMedia,
    sessionStateOf,
  });

  const authenticator = new Authenticator(adminKey, devices, readModels.keys, () => clock.now());
  const trustedProxies = new TrustedProxies(config.server.trustProxy);
  const app = createHttpApp({
    routes,
    authenticator,
    tickets,
    devices: requestDevices,
    logger: log,
    bodyLimitBytes: config.bodyLimitBytes,
    metrics,
    validateResponses: options.validateResponses,
    unauthenticatedPerMinute: config.server.unauthenticatedPerMinute,
    trustedProxies,
    readBarrier,
    onDiskFull: (error) => storage.noteWrite(error),
  });
  // Koa's handler answers its requests itself; the promise it returns is for Koa's own tests.
  // eslint-disable-next-line @typescript-eslint/no-misused-promises
  const server = await listen(app.callback(), {
    port: config.port,
    host: config.host,
    limits: {
      maxConnections: config.server.maxConnections,
      maxPerAddress: config.server.maxConnectionsPerAddress,
      // A proxy's connections carry many clients; it is capped by MAX_CONNECTIONS alone.
      exempt: (address) => trustedProxies.trusts(address),
    },
    onRefused: (reason) => metrics.httpConnectionsRefused.inc({ reason }),
    onError: (error) => log.warn({ err: error }, 'the listening socket failed to accept a connection'),
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  log.info({ url, store: store.kind, dataDir: config.dataDir }, 'gateway listening');
  // Sessions that were running when the last process stopped are resumed in the background (with several
  // processes: those whose leases this one takes).
  void sessions.restore();
  cluster?.start({ sessions, webhooks, sending });

  return {
    url,
    adminKey,
    store,
    projections,
    webhooks,
    sessions,
    stream,
    calls,
    watchdog,
    async close() {
      // First: devices are handed to the other processes at once, not after LEASE_TIMEOUT.
      await cluster?.stop();
      await stream.stop();
      await closeServer(server);
      // Connections end but recorded states stay, so the next start resumes them.
      // Draining stops first, so that tries under way still have their connection to finish on.
      await watchdog.stop();
      await sending.stop();
      await sessions.stopAll();
      sink.stop();
      retention.stop();
      await webhooks.stop();
      await outputs.stop();
      outboundGuard.destroy();
      await eventMetrics.stop();
      // The key uses noted since the last flush (written, or sent to the projector).
      readModels.keys.usage.stop();
      await projections.stop();
      await store.close();
      await messageReads.close();
      readModelDb.close();
      dataDirLock.release();
    },
  };
}

/** A worker forked by our primary (GATEWAY_PROCESSES > 1): the primary runs the machine's projector. */
const servesFromProjector = (config: Config) =>
  cluster.isWorker && config.cluster.processes > 1 && config.cluster.worker > 0;

/** Requests under way when the gateway stops get this long to be answered before their connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;
const IDLE_SWEEP_MS = 50;

/**
 * Stops taking connections and lets the requests under way be answered: a send cut off after its append would
 * be recorded but never acknowledged, and a client without an Idempotency-Key would send it again. Keep-alive
 * connections are closed as soon as they are idle; what is still busy after the grace period is cut.
 */
function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    const cut = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
}
