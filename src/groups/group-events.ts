/**
 * Events of a device's groups stream (`groups-<deviceId>`): the groups the account is in, as this device
 * changed them or as the network reported them (docs/architecture.md, "Streams, their deciders, writers and
 * read models"). GroupUpdated and GroupParticipantsChanged leave as the `group.updated` and
 * `group.participants` webhooks; their data is the payload as it is.
 */
export const groupsStream = (deviceId: string) => `groups-${deviceId}`;

export const GROUP_ROLES = ['member', 'admin', 'superadmin'] as const;
export type GroupRole = (typeof GROUP_ROLES)[number];

export const PARTICIPANT_ACTIONS = ['add', 'remove', 'promote', 'demote'] as const;
export type ParticipantAction = (typeof PARTICIPANT_ACTIONS)[number];

export interface GroupParticipant {
  /** Digits, or `<digits>@lid` when the network hides the number. */
  number: string;
  role: GroupRole;
}

/** What the network says about a group. */
export interface GroupMetadata {
  groupId: string;
  subject: string;
  description?: string;
  /** Only admins may send messages. */
  announce: boolean;
  /** Only admins may change the group's settings. */
  locked: boolean;
  participants: GroupParticipant[];
  /** Disappearing messages: seconds a message lives (0 or absent: off). */
  ephemeral?: number;
  /** Joining (by link) needs an admin's approval. */
  joinApproval?: boolean;
  /** Every member may add participants (not only admins). */
  membersCanAdd?: boolean;
}

/** The disappearing-message timers WhatsApp offers, in seconds (0: off). */
export const EPHEMERAL_DURATIONS = [0, 86_400, 604_800, 7_776_000] as const;

export interface GroupSettingsChange {
  subject?: string;
  description?: string;
  announce?: boolean;
  locked?: boolean;
  ephemeral?: number;
  joinApproval?: boolean;
  membersCanAdd?: boolean;
}

/** A group entered the account's list, or its metadata was refreshed from the network. */
export interface GroupMetadataRecordedData {
  deviceId: string;
  group: GroupMetadata;
  /** `created`, `joined` (by code), `refreshed` (the list fetched from the network), `reported` (the network told). */
  reason: 'created' | 'joined' | 'refreshed' | 'reported';
}

export interface GroupUpdatedData extends GroupSettingsChange {
  deviceId: string;
  groupId: string;
  /** Who changed it (a number), when known. */
  by?: string;
}

export interface GroupParticipantsChangedData {
  deviceId: string;
  groupId: string;
  action: ParticipantAction;
  participants: string[];
  by?: string;
}

export interface GroupLeftData {
  deviceId: string;
  groupId: string;
  /** `left` (this device left), `removed` (an admin removed the account), `gone` (no longer in the network's list). */
  reason: 'left' | 'removed' | 'gone';
}

export interface GroupInviteRevokedData {
  deviceId: string;
  groupId: string;
}

/** The group's picture was set or removed (PUT/DELETE /groups/:groupId/picture, or by another admin). */
export interface GroupPictureChangedData {
  deviceId: string;
  groupId: string;
  removed: boolean;
  by?: string;
}

export const JOIN_REQUEST_ACTIONS = ['created', 'revoked'] as const;

/** Someone asked to join a group that needs approval (`created`), or withdrew the request (`revoked`): `group.join_request`. */
export interface GroupJoinRequestData {
  deviceId: string;
  groupId: string;
  number: string;
  action: (typeof JOIN_REQUEST_ACTIONS)[number];
}

/** An admin of this account rejected a request (through the API): it is closed, so the number may ask again. No webhook. */
export interface GroupJoinRequestRejectedData {
  deviceId: string;
  groupId: string;
  numbers: string[];
}

export type GroupEvent =
  | { type: 'GroupMetadataRecorded'; data: GroupMetadataRecordedData }
  | { type: 'GroupUpdated'; data: GroupUpdatedData }
  | { type: 'GroupParticipantsChanged'; data: GroupParticipantsChangedData }
  | { type: 'GroupLeft'; data: GroupLeftData }
  | { type: 'GroupInviteRevoked'; data: GroupInviteRevokedData }
  | { type: 'GroupPictureChanged'; data: GroupPictureChangedData }
  | { type: 'GroupJoinRequested'; data: GroupJoinRequestData }
  | { type: 'GroupJoinRequestsRejected'; data: GroupJoinRequestRejectedData };

export const GROUP_EVENT_TYPES: ReadonlySet<string> = new Set<GroupEvent['type']>([
  'GroupMetadataRecorded',
  'GroupUpdated',
  'GroupParticipantsChanged',
  'GroupLeft',
  'GroupInviteRevoked',
  'GroupPictureChanged',
  'GroupJoinRequested',
  'GroupJoinRequestsRejected',
]);

/** What an engine reports about groups (EngineEvents.groups), without the device id. */
export type GroupReport =
  | { kind: 'updated'; groupId: string; change: GroupSettingsChange; by?: string }
  | { kind: 'participants'; groupId: string; action: ParticipantAction; participants: string[]; by?: string }
  /** A group's full metadata (the account was added to it, or it changed in a way only a refresh says). */
  | { kind: 'metadata'; group: GroupMetadata }
  | { kind: 'picture'; groupId: string; removed: boolean; by?: string }
  | { kind: 'join_request'; groupId: string; number: string; action: GroupJoinRequestData['action'] };
