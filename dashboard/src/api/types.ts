/**
 * What the gateway answers, as the types of the very TypeBox schemas it validates its answers against and
 * publishes in /openapi.json: a change on the server that the page does not follow fails `tsc`, not the page.
 * Type-only imports: none of the server's code ends up in the bundle.
 */
import type { Static } from 'typebox';
import type {
  CreateDeviceBody,
  DeviceListSchema,
  DeviceMaybeWithKeySchema,
  DeviceSchema,
  DeviceWithKeySchema,
  UpdateDeviceBody,
} from '../../../src/http/schemas/devices.js';
import type { ProblemSchema } from '../../../src/http/schemas/common.js';
import type {
  ChatListSchema,
  ChatSchema,
  MessagePageSchema,
  MessageViewSchema,
} from '../../../src/http/schemas/chats.js';
import type { CreateKeyBody, CreatedKeySchema, KeyListSchema } from '../../../src/http/schemas/keys.js';
import type { LabelListSchema } from '../../../src/http/schemas/labels.js';
import type { OverviewSchema } from '../../../src/http/schemas/overview.js';
import type { PacingStatusSchema } from '../../../src/http/schemas/pacing.js';
import type { PatchSettingsBody, SettingsSchema } from '../../../src/http/schemas/settings.js';
import type {
  AcceptedSchema,
  InboundAcceptedSchema,
  InboundBody,
  SandboxCallBody,
  SandboxCallSchema,
  SandboxPairBody,
  SandboxPresenceBody,
  ScanBody,
} from '../../../src/http/schemas/sandbox.js';
import type { HealthSchema } from '../../../src/http/schemas/health.js';
import type { HistoryPageSchema } from '../../../src/http/schemas/history.js';
import type {
  DeliveryListSchema,
  DeliverySchema,
  HooksSchema,
  PutHooksBody,
  TestResultSchema,
} from '../../../src/http/schemas/hooks.js';
import type { OutboxItemSchema, OutboxListSchema, RemovedSchema } from '../../../src/http/schemas/outbox.js';
import type { FileBody, ImageOrVideoBody, QueuedSchema, TextBody } from '../../../src/http/schemas/send.js';
import type {
  ClosedSessionSchema,
  CloseSessionBody,
  PairBody,
  PairingSchema,
  QrSchema,
  SessionStateOnlySchema,
} from '../../../src/http/schemas/session.js';
import type { WebhookEventKind } from '../../../src/webhooks/event-kinds.js';
import type {
  CallReceivedPayload,
  ChatDeletedPayload,
  ChatLabelsPayload,
  ChatUpdatedPayload,
  GroupJoinRequestPayload,
  HistorySyncedPayload,
  LabelUpdatedPayload,
  MessageDeletedPayload,
  SessionHealthPayload,
  StatusReceivedPayload,
  ChannelMessagePayload,
  ChannelReactionPayload,
  GroupParticipantsPayload,
  GroupUpdatedPayload,
  MessageEditedPayload,
  MessageReceivedPayload,
  MessageRevokedPayload,
  MessageStatusPayload,
  PollVotePayload,
  PresenceUpdatePayload,
  SessionStatePayload,
} from '../../../src/webhooks/webhook-schemas.js';

export type Problem = Static<typeof ProblemSchema>;

export type Device = Static<typeof DeviceSchema>;
export type DeviceWithKey = Static<typeof DeviceWithKeySchema>;
export type DeviceMaybeWithKey = Static<typeof DeviceMaybeWithKeySchema>;
export type DeviceList = Static<typeof DeviceListSchema>;
export type CreateDevice = Static<typeof CreateDeviceBody>;
export type UpdateDevice = Static<typeof UpdateDeviceBody>;
export type Engine = Device['engine'];
export type SessionState = Device['session']['state'];

export type SessionStateOnly = Static<typeof SessionStateOnlySchema>;
export type ClosedSession = Static<typeof ClosedSessionSchema>;
export type CloseSession = Static<typeof CloseSessionBody>;
export type Pair = Static<typeof PairBody>;
export type Pairing = Static<typeof PairingSchema>;
export type Qr = Static<typeof QrSchema>;

export type SendText = Static<typeof TextBody>;
export type SendImage = Static<typeof ImageOrVideoBody>;
export type SendFile = Static<typeof FileBody>;
export type Queued = Static<typeof QueuedSchema>;
export type OutboxItem = Static<typeof OutboxItemSchema>;
export type OutboxList = Static<typeof OutboxListSchema>;
export type Removed = Static<typeof RemovedSchema>;

export type Hooks = Static<typeof HooksSchema>;
export type PutHooks = Static<typeof PutHooksBody>;
export type HookEvents = Hooks['events'];
export type TestResult = Static<typeof TestResultSchema>;
export type Delivery = Static<typeof DeliverySchema>;
export type DeliveryList = Static<typeof DeliveryListSchema>;

export type CreateKey = Static<typeof CreateKeyBody>;
export type CreatedKey = Static<typeof CreatedKeySchema>;
export type KeyList = Static<typeof KeyListSchema>;
export type ScopedKey = KeyList['items'][number];

export type Settings = Static<typeof SettingsSchema>;
export type PatchSettings = Static<typeof PatchSettingsBody>;
export type PacingStatus = Static<typeof PacingStatusSchema>;

export type Overview = Static<typeof OverviewSchema>;
export type OverviewItem = Overview['items'][number];

export type Chat = Static<typeof ChatSchema>;
export type ChatList = Static<typeof ChatListSchema>;
/** The yes/no filters of GET /chats the inbox offers. */
export type ChatFilter = 'unread' | 'pinned' | 'archived';
export type LabelList = Static<typeof LabelListSchema>;
export type MessageView = Static<typeof MessageViewSchema>;
export type MessagePage = Static<typeof MessagePageSchema>;

export type Scan = Static<typeof ScanBody>;
export type SandboxPair = Static<typeof SandboxPairBody>;
export type SandboxInbound = Static<typeof InboundBody>;
export type SandboxPresence = Static<typeof SandboxPresenceBody>;
export type SandboxCall = Static<typeof SandboxCallBody>;
export type SandboxCallAnswer = Static<typeof SandboxCallSchema>;
export type Accepted = Static<typeof AcceptedSchema>;
export type InboundAccepted = Static<typeof InboundAcceptedSchema>;

export type Health = Static<typeof HealthSchema>;
export type HistoryPage = Static<typeof HistoryPageSchema>;
export type HistoryItem = HistoryPage['items'][number];

/** Each webhook kind's payload schema: indexing it by a kind it lacks fails to compile. */
interface PayloadSchemas {
  'message.received': typeof MessageReceivedPayload;
  'message.status': typeof MessageStatusPayload;
  'session.state': typeof SessionStatePayload;
  'message.edited': typeof MessageEditedPayload;
  'message.revoked': typeof MessageRevokedPayload;
  'poll.vote': typeof PollVotePayload;
  'presence.update': typeof PresenceUpdatePayload;
  'call.received': typeof CallReceivedPayload;
  'group.participants': typeof GroupParticipantsPayload;
  'group.updated': typeof GroupUpdatedPayload;
  'session.health': typeof SessionHealthPayload;
  'chat.updated': typeof ChatUpdatedPayload;
  'chat.deleted': typeof ChatDeletedPayload;
  'message.deleted': typeof MessageDeletedPayload;
  'history.synced': typeof HistorySyncedPayload;
  'group.join_request': typeof GroupJoinRequestPayload;
  'status.received': typeof StatusReceivedPayload;
  'channel.message': typeof ChannelMessagePayload;
  'channel.reaction': typeof ChannelReactionPayload;
  'label.updated': typeof LabelUpdatedPayload;
  'chat.labels': typeof ChatLabelsPayload;
}

/** A webhook envelope as GET /stream sends it, one variant per kind, its `data` typed by `event`. */
export type Envelope = {
  [Kind in WebhookEventKind]: {
    id: string;
    event: Kind;
    deviceId: string;
    timestamp: string;
    data: Static<PayloadSchemas[Kind]>;
  };
}[WebhookEventKind];

export interface StreamEvent {
  /** The event's position in the log: the stream's `id:`. */
  position: number;
  envelope: Envelope;
}
