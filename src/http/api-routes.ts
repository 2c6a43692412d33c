/**
 * Every route of the HTTP API, built from the gateway's parts (src/gateway.ts makes them): the list the router,
 * /openapi.json and the MCP tools read. The services only routes call are made here, each served by the
 * device's owner (OwnerCalls) where it needs the live connection.
 */
import type Database from 'better-sqlite3';
import type { Supervisor } from '../actors/supervisor.js';
import type { AccountCommands } from '../account/account-commands.js';
import type { StreamTickets } from '../auth/stream-tickets.js';
import { ChatCommands } from '../chats/chat-commands.js';
import type { MessageIndexReads } from '../chats/message-index-reads.js';
import { MessageMedia } from '../chats/message-media.js';
import type { OwnerCalls } from '../cluster/owner-calls.js';
import type { ClusterNode } from '../cluster/cluster-wiring.js';
import type { Config } from '../config.js';
import { createContactLookups } from '../contacts/contact-lookups.js';
import { PresenceSubscriptions } from '../contacts/contact-presence.js';
import { DeviceKeys } from '../devices/device-keys.js';
import type { DeviceRegistry, DeviceCommands } from '../devices/device-registry.js';
import type { Engines } from '../engines/engines.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { InboxCommands } from '../inbox/inbox-commands.js';
import type { InboundMediaStore } from '../media/inbound-media-store.js';
import { mediaLimitOf } from '../media/media-limits.js';
import type { Metrics } from '../metrics/metrics.js';
import type { OutboundGuard } from '../net/outbound-guard.js';
import type { PacingStatuses } from '../outbox/pacing/pacing-status.js';
import type { Sending } from '../outbox/sending.js';
import type { OutputCommands } from '../outputs/output-commands.js';
import type { Outputs } from '../outputs/outputs.js';
import type { ReadModelFeed } from '../projections/projection-runner.js';
import type { ReadModels } from '../read-models.js';
import { SealedText } from '../secrets/sealed-text.js';
import { SettingsCommands } from '../settings/settings-commands.js';
import type { ReaderThreads } from '../storage/reader-threads.js';
import type { StorageHealth } from '../storage/storage-health.js';
import type { EventStreamHub } from '../stream/event-stream-hub.js';
import type { Clock } from '../time/clock.js';
import { VERSION } from '../version.js';
import type { Webhooks } from '../webhooks/webhooks.js';
import { API_GUIDE } from './api-guide.js';
import { BodyGate } from './body/body-gate.js';
import { mcpEndpoint } from './mcp/mcp-endpoint.js';
import { buildOpenApiDocument } from './openapi.js';
import type { DeviceLookup, RouteSpec } from './route.js';
import { accountRoutes } from './routes/account.js';
import { chatRoutes } from './routes/chats.js';
import { contactRoutes } from './routes/contacts.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { deviceEventRoutes } from './routes/device-events.js';
import { deviceRoutes } from './routes/devices.js';
import { docsRoutes } from './routes/docs.js';
import { GROUP_PICTURE_MAX_BYTES, groupRoutes } from './routes/groups.js';
import { channelRoutes } from './routes/channels.js';
import { healthRoutes } from './routes/health.js';
import { hookRoutes } from './routes/hooks.js';
import { keyRoutes } from './routes/keys.js';
import { labelRoutes } from './routes/labels.js';
import { LabelCommands } from '../chats/label-commands.js';
import { messageRoutes } from './routes/messages.js';
import { metricsRoutes } from './routes/metrics.js';
import { outboxRoutes } from './routes/outbox.js';
import { outputRoutes } from './routes/outputs.js';
import { overviewRoutes } from './routes/overview.js';
import { pacingRoutes } from './routes/pacing.js';
import { presenceRoutes } from './routes/presence.js';
import { sandboxLabelRoutes } from './routes/sandbox-labels.js';
import { sandboxRoutes } from './routes/sandbox.js';
import { sendRoutes } from './routes/send.js';
import { sessionRoutes } from './routes/session.js';
import { settingsRoutes } from './routes/settings.js';
import { statusRoutes } from './routes/status.js';
import { streamRoutes } from './routes/stream.js';
import { webhookRoutes } from './routes/webhooks.js';
import { webSocketRoutes } from './routes/websocket.js';

/** What the routes call: the gateway's stores, read models, writers and live parts. */
export interface ApiParts {
  config: Config;
  /** The built dashboard (default dist/dashboard). */
  dashboardDir: string | undefined;
  startedAt: number;
  clock: Clock;
  store: EventStore;
  readModels: ReadModels;
  readModelDb: Database.Database;
  /** The message index's heavy reads, on reader threads. */
  messageReads: ReaderThreads<MessageIndexReads>;
  projections: ReadModelFeed;
  storage: StorageHealth;
  metrics: Metrics;
  cluster: ClusterNode | undefined;
  registry: DeviceRegistry;
  deviceCommands: DeviceCommands;
  sessions: Supervisor;
  engines: Engines;
  calls: OwnerCalls;
  outboundGuard: OutboundGuard;
  webhooks: Webhooks;
  stream: EventStreamHub;
  tickets: StreamTickets;
  requestDevices: DeviceLookup;
  outputCommands: OutputCommands;
  outputs: Outputs;
  sending: Sending;
  pacingStatuses: PacingStatuses;
  /** The groups' writer, served by the device's owner. */
  groups: Parameters<typeof groupRoutes>[0];
  /** The channels' writer, served by the device's owner. */
  channels: Parameters<typeof channelRoutes>[0];
  accountCommands: AccountCommands;
  inbox: InboxCommands;
  receivedMedia: InboundMediaStore;
  /** The session's state as this process knows best, for the words of refusals. */
  sessionStateOf: (deviceId: string) => string | undefined;
}

export function apiRoutes(parts: ApiParts): RouteSpec[] {
  const { config, clock, store, readModels, readModelDb, messageReads, projections, storage, metrics, cluster } = parts;
  const { registry, deviceCommands, sessions, engines, calls, outboundGuard, webhooks, stream } = parts;
  const { tickets, requestDevices, outputCommands, outputs, sending, pacingStatuses } = parts;
  const { groups, channels, accountCommands, inbox, receivedMedia, sessionStateOf, startedAt } = parts;
  const { devices, history, contacts, sending: sendingCore, messages } = readModels;
  const routes: RouteSpec[] = [];
  const openApi = buildLazy(() =>
    buildOpenApiDocument(routes, {
      title: 'Device Messaging Gateway',
      version: VERSION,
      description: API_GUIDE,
    }),
  );
  routes.push(
    ...healthRoutes(store, VERSION, startedAt, storage, cluster?.report),
    ...deviceRoutes({ registry, devices, sessions }),
    ...deviceEventRoutes(store, history),
    ...sessionRoutes({
      devices,
      sessions,
      projections,
      storage,
      health: (deviceId) => readModels.health.health(deviceId),
    }),
    ...metricsRoutes(metrics, config.metricsPublic),
    ...overviewRoutes(
      readModels.devices,
      readModels.activity,
      readModels.sending.outboxView,
      () => webhooks.deliveries.backlogByDevice(),
      clock,
    ),
    ...docsRoutes(openApi),
  );
  routes.push(...hookRoutes({ webhooks, guard: outboundGuard }));
  routes.push(...webhookRoutes({ webhooks, guard: outboundGuard }));
  routes.push(...streamRoutes(stream), ...dashboardRoutes(parts.dashboardDir));
  routes.push(...outputRoutes({ commands: outputCommands, outputs }));
  routes.push(...webSocketRoutes(stream, tickets));
  routes.push(...mcpEndpoint(routes, requestDevices));
  // Large media bodies (sends, sandbox inbound media) are read a few at a time.
  const bodyGate = new BodyGate({
    concurrency: config.server.largeBodyConcurrency,
    queue: config.server.largeBodyQueue,
    clock,
  });
  routes.push(
    ...sandboxRoutes({
      sessions,
      sandbox: engines.sandbox,
      projections,
      clock,
      calls,
      seen: messages,
      storage,
      inboundMedia: {
        limit: config.media.fileMaxBytes,
        uploadDir: sending.media.incomingDir,
        gate: bodyGate,
        downloadPending: async (deviceId, waMessageId) =>
          config.inboundMedia.enabled && (await receivedMedia.size(deviceId, waMessageId)) === undefined,
      },
    }),
  );
  routes.push(
    ...labelRoutes({
      labels: calls.serve(
        'labels',
        new LabelCommands({
          inbox,
          index: messages,
          connection: (deviceId) => sessions.connection(deviceId),
          sessionState: sessionStateOf,
          projections,
        }),
        { create: 'once', update: 'once', remove: 'once', labelChat: 'once' },
      ),
      index: messages,
    }),
    ...sandboxLabelRoutes({ sandbox: engines.sandbox, calls }),
  );
  routes.push(
    ...chatRoutes({
      chats: calls.serve(
        'chats',
        new ChatCommands({
          inbox,
          index: messages,
          connection: (deviceId) => sessions.connection(deviceId),
          sessionState: sessionStateOf,
          projections,
          now: () => clock.now(),
        }),
        {
          read: 'repeatable',
          presence: 'repeatable',
          modify: 'once',
          remove: 'once',
          star: 'once',
          pin: 'once',
          deleteForMe: 'once',
          // Asked again, the same answer comes: the same messages, recorded once.
          fetchHistory: 'repeatable',
        },
      ),
      index: messages,
      reads: messageReads,
      now: () => clock.now(),
    }),
    ...messageRoutes({
      index: messages,
      media: new MessageMedia({
        index: messages,
        files: receivedMedia,
        outboxFiles: sending.media,
        retentionMs: config.inboundMedia.retentionMs,
        now: () => clock.now(),
      }),
      deferredUntil: (deviceId, outboxId) => pacingStatuses.messageDeferredUntil(deviceId, outboxId),
    }),
  );
  routes.push(
    ...sendRoutes({
      sends: sending.sends,
      media: sending.media,
      mediaSettings: config.media,
      bodyGate,
    }),
    ...outboxRoutes({
      sends: sending.sends,
      outboxView: sendingCore.outboxView,
      messages: readModels.messages,
      deferredUntil: (deviceId) => pacingStatuses.deferredUntil(deviceId),
    }),
    ...pacingRoutes(pacingStatuses),
    ...statusRoutes({
      sends: sending.sends,
      statuses: readModels.statuses,
      media: sending.media,
      mediaSettings: config.media,
      bodyGate,
      now: () => clock.now(),
    }),
  );
  routes.push(
    ...groupRoutes(groups, {
      bodyGate,
      uploadDir: sending.media.incomingDir,
      limit: Math.min(mediaLimitOf('image', config.media), GROUP_PICTURE_MAX_BYTES),
    }),
    ...channelRoutes(channels),
  );
  // A proxy host is judged by the same guard as webhook and media URLs.
  routes.push(
    ...settingsRoutes(
      new SettingsCommands({
        store,
        settings: readModels.settings,
        projections,
        addressRefusal: (url) => outboundGuard.refusalOf(url),
        sealed: new SealedText(config.encryptionKey),
        // A changed pacing may open (or close) a deferred outbox's window.
        onChange: (deviceId) => sending.drainer.kick(deviceId),
      }),
    ),
  );
  // Served by the owner: its cache and its allowance of fresh lookups are the device's.
  const lookups = calls.serve(
    'contacts',
    createContactLookups(
      readModelDb,
      { connection: (deviceId) => sessions.connection(deviceId), state: sessionStateOf },
      config.contacts,
    ),
    { check: 'repeatable', avatar: 'repeatable', about: 'repeatable' },
  );
  const account = {
    ...calls.serve('account', accountCommands, { profile: 'repeatable', changeProfile: 'once', block: 'once' }),
    blocked: (deviceId: string) => accountCommands.blocked(deviceId),
  };
  routes.push(...accountRoutes({ account, lookups }));
  routes.push(...keyRoutes(new DeviceKeys(deviceCommands, projections, readModels.keys, () => clock.now())));
  routes.push(
    ...presenceRoutes({
      subscriptions: calls.serve(
        'presence',
        new PresenceSubscriptions({
          connection: (deviceId) => sessions.connection(deviceId),
          sessionState: sessionStateOf,
        }),
        { subscribe: 'repeatable' },
      ),
      presence: readModels.presence,
    }),
  );
  routes.push(
    ...contactRoutes({
      contacts,
      identities: readModels.identities,
      lookups,
      limits: config.contacts,
    }),
  );
  return routes;
}

function buildLazy<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}
