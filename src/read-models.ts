import { DeviceKeysReadModel } from './devices/device-keys-read-model.js';
import type Database from 'better-sqlite3';
import type { Logger } from 'pino';
import { ContactsReadModel } from './contacts/contacts-read-model.js';
import type { EventStore } from './eventstore/event-store.js';
import { SendingCore } from './outbox/sending.js';
import { DeviceHistoryIndex } from './projections/device-history-index.js';
import { DevicesReadModel } from './devices/devices-read-model.js';
import type { Projection } from './projections/projection.js';
import { WebhooksReadModel } from './webhooks/webhooks-read-model.js';
import { MessageIndex } from './chats/message-index.js';
import { GroupsReadModel } from './groups/groups-read-model.js';
import { ChannelsReadModel } from './channels/channels-read-model.js';
import { BlocklistReadModel } from './account/blocklist-read-model.js';
import { IdentitiesReadModel } from './contacts/identities-read-model.js';
import { SettingsReadModel } from './settings/settings-read-model.js';
import { HealthReadModel } from './watchdog/health-read-model.js';
import { SealedText } from './secrets/sealed-text.js';
import { HookSecrets } from './webhooks/hook-secrets.js';
import { DailyActivityReadModel } from './activity/daily-activity-read-model.js';
import { OutputsReadModel } from './outputs/outputs-read-model.js';
import { StatusesReadModel } from './status/statuses-read-model.js';
import { ContactPresenceReadModel } from './contacts/contact-presence.js';

/**
 * Every read model of the gateway over one read-model database: the gateway serves from them and
 * `npm run rebuild` rebuilds exactly these. Webhook deliveries have a runner of their own, so that
 * delivery bookkeeping never delays the API's read-your-writes.
 */
export interface ReadModels {
  devices: DevicesReadModel;
  history: DeviceHistoryIndex;
  sending: SendingCore;
  contacts: ContactsReadModel;
  /** Every message a device sent or received (replies, forwards, edits, read receipts, received media, polls). */
  messages: MessageIndex;
  /** The groups each account is in, with participants. */
  groups: GroupsReadModel;
  /** The channels (newsletters) each account owns, administers or follows. */
  channels: ChannelsReadModel;
  /** The numbers each account blocks. */
  blocklist: BlocklistReadModel;
  /** Each device's settings (call rejection, proxy). */
  settings: SettingsReadModel;
  /** Messages sent, received and failed per device and UTC day (GET /overview). */
  activity: DailyActivityReadModel;
  /** The broker outputs (RabbitMQ, NATS JetStream) with their positions. */
  outputs: OutputsReadModel;
  /** Each session's health as the watchdog judged it. */
  health: HealthReadModel;
  /** The statuses each device posted, with their viewers. */
  statuses: StatusesReadModel;
  /** The last presence seen of each contact. */
  presence: ContactPresenceReadModel;
  /** Scoped device keys, by hash. */
  keys: DeviceKeysReadModel;
  /** The LID ↔ number pairs each account learned. */
  identities: IdentitiesReadModel;
  /** Fed by the main runner. */
  projections: Projection[];
}

/**
 * `otherWriters`: several processes append to the store's streams (leases on). `encryptionKey`: ENCRYPTION_KEY,
 * with which the read models keep credentials sealed (also those older events recorded in clear).
 */
export function createReadModels(
  db: Database.Database,
  store: EventStore,
  log: Logger,
  options: { otherWriters?: boolean; encryptionKey?: Uint8Array | undefined } = {},
): ReadModels {
  const devices = new DevicesReadModel(db);
  const history = new DeviceHistoryIndex(db);
  const sending = new SendingCore(db, store, log, options.otherWriters === true);
  const contacts = new ContactsReadModel(db);
  const messages = new MessageIndex(db);
  const groups = new GroupsReadModel(db);
  const channels = new ChannelsReadModel(db);
  const blocklist = new BlocklistReadModel(db);
  const settings = new SettingsReadModel(db, new SealedText(options.encryptionKey));
  const activity = new DailyActivityReadModel(db);
  const outputs = new OutputsReadModel(db);
  const health = new HealthReadModel(db);
  const statuses = new StatusesReadModel(db);
  const presence = new ContactPresenceReadModel(db);
  const keys = new DeviceKeysReadModel(db);
  const identities = new IdentitiesReadModel(db);
  return {
    devices,
    history,
    sending,
    contacts,
    messages,
    groups,
    channels,
    blocklist,
    settings,
    activity,
    outputs,
    health,
    statuses,
    presence,
    keys,
    identities,
    projections: [
      devices,
      history,
      ...sending.projections,
      contacts,
      messages,
      groups,
      channels,
      blocklist,
      settings,
      activity,
      outputs,
      health,
      statuses,
      presence,
      keys,
      identities,
    ],
  };
}

/** The webhook runner's read models (see Webhooks.start). */
export const webhookProjections = (db: Database.Database, encryptionKey?: Uint8Array): Projection[] => [
  new WebhooksReadModel(db, new HookSecrets(encryptionKey)),
];

/**
 * Every projection of both runners, for a rebuild: one pass over the log feeds them all. Checkpoints are
 * kept per projection, so the gateway's two runners resume from what the rebuild left.
 */
export const allProjections = (
  db: Database.Database,
  store: EventStore,
  log: Logger,
  encryptionKey?: Uint8Array,
): Projection[] => [
  ...createReadModels(db, store, log, { encryptionKey }).projections,
  ...webhookProjections(db, encryptionKey),
];
