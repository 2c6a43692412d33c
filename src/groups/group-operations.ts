/**
 * What a live engine connection does with groups (the engine port's `groups`, src/engines/engine.ts).
 * Declared here, with the group events, so that the groups folder never needs the engines.
 */
import type { GroupMetadata, GroupSettingsChange, ParticipantAction } from './group-events.js';

export const PARTICIPANT_STATUSES = ['ok', 'not_found', 'not_in_group', 'already_in_group', 'not_allowed'] as const;
export type ParticipantStatus = (typeof PARTICIPANT_STATUSES)[number];

export interface ParticipantResult {
  number: string;
  status: ParticipantStatus;
}

export interface CreatedGroup {
  group: GroupMetadata;
  /** Numbers the network did not add, and why. */
  failed: Array<{ number: string; reason: string }>;
}

export interface GroupOperations {
  /** Every group the account is in, with participants (one request to the network). */
  list(): Promise<GroupMetadata[]>;
  metadata(groupId: string): Promise<GroupMetadata>;
  create(subject: string, participants: readonly string[]): Promise<CreatedGroup>;
  update(groupId: string, change: GroupSettingsChange): Promise<void>;
  participants(groupId: string, action: ParticipantAction, numbers: readonly string[]): Promise<ParticipantResult[]>;
  inviteCode(groupId: string): Promise<string>;
  /** Makes a new code (the old one stops working) and answers it. */
  revokeInvite(groupId: string): Promise<string>;
  /**
   * Joins by an invite code; answers the group's id, or `{ groupId, requested: true }` when the group needs an
   * admin's approval (a join request was made instead).
   */
  join(code: string): Promise<string | JoinRequested>;
  leave(groupId: string): Promise<void>;
  /** The group's picture: its URL, or null when it has none (absent: the engine has no pictures). */
  pictureUrl?(groupId: string): Promise<string | null>;
  /** Sets the picture (JPEG or PNG bytes). */
  setPicture?(groupId: string, image: Buffer): Promise<void>;
  removePicture?(groupId: string): Promise<void>;
  /** Pending requests to join (a group with join approval). */
  joinRequests?(groupId: string): Promise<JoinRequest[]>;
  /** Approves or rejects requests: one result per number (`not_found`: no such request). */
  answerJoinRequests?(
    groupId: string,
    action: JoinRequestAnswer,
    numbers: readonly string[],
  ): Promise<ParticipantResult[]>;
}

export interface JoinRequested {
  groupId: string;
  requested: true;
}

export interface JoinRequest {
  /** Digits, or `<digits>@lid`. */
  number: string;
  /** ISO 8601. */
  requestedAt: string;
}

export const JOIN_REQUEST_ANSWERS = ['approve', 'reject'] as const;
export type JoinRequestAnswer = (typeof JOIN_REQUEST_ANSWERS)[number];

/**
 * Why the network refused a group operation, as engines report it (EngineError codes): the group does not
 * exist or the account is not in it, the account is not an admin, the invite code is not valid.
 */
export const GROUP_ENGINE_ERRORS = ['group_not_found', 'not_group_admin', 'invalid_invite_code'] as const;
