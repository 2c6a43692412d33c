/**
 * Every kind of stream in the store, with what makes it: its name, its events, its decider and its one
 * writer (docs/architecture.md, "Streams, their deciders, writers and read models", and invariant 3). The
 * table there is held against this list by test/streams.test.ts: the same prefixes, events and files, and
 * each file does export the name given for it.
 */
import { accountDecider } from './account/account-decider.js';
import { AccountCommands } from './account/account-commands.js';
import { ACCOUNT_EVENT_TYPES, accountStream } from './account/account-events.js';
import { streamTicketDecider } from './auth/stream-ticket-decider.js';
import { STREAM_TICKET_EVENT_TYPES, streamTicketStream } from './auth/stream-ticket-events.js';
import { StreamTickets } from './auth/stream-tickets.js';
import { DeviceLeases } from './cluster/device-leases.js';
import { leaseDecider, memberDecider } from './cluster/lease-decider.js';
import { LEASE_EVENT_TYPES, MEMBER_EVENT_TYPES, leaseStream, memberStream } from './cluster/lease-events.js';
import {
  SESSION_REQUEST_EVENT_TYPES,
  SessionRequests,
  sessionRequestStream,
  sessionRequestsDecider,
} from './cluster/session-requests.js';
import { CHANNEL_EVENT_TYPES, channelsStream } from './channels/channel-events.js';
import { channelsDecider } from './channels/channels-decider.js';
import { ChannelCommands } from './channels/channel-commands.js';
import { CONTACT_EVENT_TYPES, contactsStream } from './contacts/contact-events.js';
import { contactsDecider } from './contacts/contacts-decider.js';
import { ContactsCommands } from './contacts/contacts-commands.js';
import { deviceDecider } from './devices/device-decider.js';
import { DEVICE_STREAM_EVENT_TYPES, deviceStream } from './devices/device-events.js';
import { createDeviceCommands } from './devices/device-registry.js';
import { GROUP_EVENT_TYPES, groupsStream } from './groups/group-events.js';
import { groupsDecider } from './groups/groups-decider.js';
import { GroupCommands } from './groups/group-commands.js';
import { InboxCommands } from './inbox/inbox-commands.js';
import { inboxDecider } from './inbox/inbox-decider.js';
import { INBOX_EVENT_TYPES, inboxStream } from './inbox/inbox-events.js';
import { outboxStream } from './messages/message-events.js';
import { DeviceOutbox } from './outbox/stream/device-outbox.js';
import { OUTBOX_EVENT_TYPES } from './outbox/stream/outbox-events.js';
import { outboxDecider } from './outbox/stream/outbox-decider.js';
import { createSessionDecider } from './sessions/session-decider.js';
import { SessionCommands } from './sessions/session-commands.js';
import { SESSION_EVENT_TYPES, sessionStream } from './sessions/session-events.js';
import { settingsDecider } from './settings/settings-decider.js';
import { SettingsCommands } from './settings/settings-commands.js';
import { SETTINGS_EVENT_TYPES, settingsStream } from './settings/settings-events.js';
import { deliveryLaneDecider } from './webhooks/delivery-lane-decider.js';
import { DELIVERY_EVENT_TYPES, webhooksStream } from './webhooks/delivery-events.js';
import { createDeliveryLaneCommands } from './webhooks/webhooks.js';
import { outputDecider } from './outputs/output-decider.js';
import { OutputCommands } from './outputs/output-commands.js';
import { OUTPUT_EVENT_TYPES, outputStream } from './outputs/output-events.js';
import { webhookSettingsDecider } from './webhooks/webhook-settings-decider.js';
import { WEBHOOK_SETTINGS_EVENT_TYPES, webhookSettingsStream } from './webhooks/webhook-settings-events.js';
import { createWebhookSettingsCommands } from './webhooks/webhook-registry.js';
import { healthDecider } from './watchdog/health-decider.js';
import { HEALTH_EVENT_TYPES, healthStream } from './watchdog/health-events.js';
import { Watchdog } from './watchdog/watchdog.js';

/** An export of a module under src/: the file that declares it, its name there, and the value itself. */
export interface Declared<T = unknown> {
  file: string;
  name: string;
  value: T;
}

export interface StreamKind {
  /** Every stream of the kind is named `<prefix><id>` (a device id; a member id for `member-`, an output id for `output-`). */
  prefix: string;
  /** The stream of one id. */
  stream: (id: string) => string;
  /** The types of the events the stream holds, declared in `eventsFile`. */
  eventTypes: ReadonlySet<string>;
  eventsFile: string;
  decider: Declared;
  writer: Declared;
}

const declared = <T>(file: string, name: string, value: T): Declared<T> => ({ file, name, value });

export const STREAMS: readonly StreamKind[] = [
  {
    prefix: 'device-',
    stream: deviceStream,
    eventTypes: DEVICE_STREAM_EVENT_TYPES,
    eventsFile: 'src/devices/device-events.ts',
    decider: declared('src/devices/device-decider.ts', 'deviceDecider', deviceDecider),
    writer: declared('src/devices/device-registry.ts', 'createDeviceCommands', createDeviceCommands),
  },
  {
    prefix: 'session-',
    stream: sessionStream,
    eventTypes: SESSION_EVENT_TYPES,
    eventsFile: 'src/sessions/session-events.ts',
    decider: declared('src/sessions/session-decider.ts', 'createSessionDecider', createSessionDecider),
    writer: declared('src/sessions/session-commands.ts', 'SessionCommands', SessionCommands),
  },
  {
    prefix: 'outbox-',
    stream: outboxStream,
    eventTypes: OUTBOX_EVENT_TYPES,
    eventsFile: 'src/outbox/stream/outbox-events.ts',
    decider: declared('src/outbox/stream/outbox-decider.ts', 'outboxDecider', outboxDecider),
    writer: declared('src/outbox/stream/device-outbox.ts', 'DeviceOutbox', DeviceOutbox),
  },
  {
    prefix: 'inbox-',
    stream: inboxStream,
    eventTypes: INBOX_EVENT_TYPES,
    eventsFile: 'src/inbox/inbox-events.ts',
    decider: declared('src/inbox/inbox-decider.ts', 'inboxDecider', inboxDecider),
    writer: declared('src/inbox/inbox-commands.ts', 'InboxCommands', InboxCommands),
  },
  {
    prefix: 'groups-',
    stream: groupsStream,
    eventTypes: GROUP_EVENT_TYPES,
    eventsFile: 'src/groups/group-events.ts',
    decider: declared('src/groups/groups-decider.ts', 'groupsDecider', groupsDecider),
    writer: declared('src/groups/group-commands.ts', 'GroupCommands', GroupCommands),
  },
  {
    prefix: 'channels-',
    stream: channelsStream,
    eventTypes: CHANNEL_EVENT_TYPES,
    eventsFile: 'src/channels/channel-events.ts',
    decider: declared('src/channels/channels-decider.ts', 'channelsDecider', channelsDecider),
    writer: declared('src/channels/channel-commands.ts', 'ChannelCommands', ChannelCommands),
  },
  {
    prefix: 'contacts-',
    stream: contactsStream,
    eventTypes: CONTACT_EVENT_TYPES,
    eventsFile: 'src/contacts/contact-events.ts',
    decider: declared('src/contacts/contacts-decider.ts', 'contactsDecider', contactsDecider),
    writer: declared('src/contacts/contacts-commands.ts', 'ContactsCommands', ContactsCommands),
  },
  {
    prefix: 'account-',
    stream: accountStream,
    eventTypes: ACCOUNT_EVENT_TYPES,
    eventsFile: 'src/account/account-events.ts',
    decider: declared('src/account/account-decider.ts', 'accountDecider', accountDecider),
    writer: declared('src/account/account-commands.ts', 'AccountCommands', AccountCommands),
  },
  {
    prefix: 'settings-',
    stream: settingsStream,
    eventTypes: SETTINGS_EVENT_TYPES,
    eventsFile: 'src/settings/settings-events.ts',
    decider: declared('src/settings/settings-decider.ts', 'settingsDecider', settingsDecider),
    writer: declared('src/settings/settings-commands.ts', 'SettingsCommands', SettingsCommands),
  },
  {
    prefix: 'lease-',
    stream: leaseStream,
    eventTypes: LEASE_EVENT_TYPES,
    eventsFile: 'src/cluster/lease-events.ts',
    decider: declared('src/cluster/lease-decider.ts', 'leaseDecider', leaseDecider),
    writer: declared('src/cluster/device-leases.ts', 'DeviceLeases', DeviceLeases),
  },
  {
    prefix: 'member-',
    stream: memberStream,
    eventTypes: MEMBER_EVENT_TYPES,
    eventsFile: 'src/cluster/lease-events.ts',
    decider: declared('src/cluster/lease-decider.ts', 'memberDecider', memberDecider),
    writer: declared('src/cluster/device-leases.ts', 'DeviceLeases', DeviceLeases),
  },
  {
    prefix: 'session-requests-',
    stream: sessionRequestStream,
    eventTypes: SESSION_REQUEST_EVENT_TYPES,
    eventsFile: 'src/cluster/session-requests.ts',
    decider: declared('src/cluster/session-requests.ts', 'sessionRequestsDecider', sessionRequestsDecider),
    writer: declared('src/cluster/session-requests.ts', 'SessionRequests', SessionRequests),
  },
  {
    prefix: 'webhooks-',
    stream: webhooksStream,
    eventTypes: DELIVERY_EVENT_TYPES,
    eventsFile: 'src/webhooks/delivery-events.ts',
    decider: declared('src/webhooks/delivery-lane-decider.ts', 'deliveryLaneDecider', deliveryLaneDecider),
    writer: declared('src/webhooks/webhooks.ts', 'createDeliveryLaneCommands', createDeliveryLaneCommands),
  },
  {
    prefix: 'output-',
    stream: outputStream,
    eventTypes: OUTPUT_EVENT_TYPES,
    eventsFile: 'src/outputs/output-events.ts',
    decider: declared('src/outputs/output-decider.ts', 'outputDecider', outputDecider),
    writer: declared('src/outputs/output-commands.ts', 'OutputCommands', OutputCommands),
  },
  {
    prefix: 'webhook-settings-',
    stream: webhookSettingsStream,
    eventTypes: WEBHOOK_SETTINGS_EVENT_TYPES,
    eventsFile: 'src/webhooks/webhook-settings-events.ts',
    decider: declared('src/webhooks/webhook-settings-decider.ts', 'webhookSettingsDecider', webhookSettingsDecider),
    writer: declared(
      'src/webhooks/webhook-registry.ts',
      'createWebhookSettingsCommands',
      createWebhookSettingsCommands,
    ),
  },
  {
    prefix: 'health-',
    stream: healthStream,
    eventTypes: HEALTH_EVENT_TYPES,
    eventsFile: 'src/watchdog/health-events.ts',
    decider: declared('src/watchdog/health-decider.ts', 'healthDecider', healthDecider),
    writer: declared('src/watchdog/watchdog.ts', 'Watchdog', Watchdog),
  },
  {
    prefix: 'stream-ticket-',
    stream: streamTicketStream,
    eventTypes: STREAM_TICKET_EVENT_TYPES,
    eventsFile: 'src/auth/stream-ticket-events.ts',
    decider: declared('src/auth/stream-ticket-decider.ts', 'streamTicketDecider', streamTicketDecider),
    writer: declared('src/auth/stream-tickets.ts', 'StreamTickets', StreamTickets),
  },
];
