/**
 * The part of a Baileys socket (`makeWASocket`'s result) the engine uses. Narrow on purpose: tests
 * drive the engine with a fake that follows Baileys' event contract, and the real socket must stay
 * assignable to it (checked where the factory is defined).
 */
import type {
  AnyMessageContent,
  BaileysEventEmitter,
  ChatModification,
  GroupMetadata,
  MiscMessageGenerationOptions,
  ParticipantAction,
  UserFacingSocketConfig,
  WAMessage,
  WAMessageKey,
  WAPresence,
} from 'baileys';

export interface BaileysSocket {
  ev: Pick<BaileysEventEmitter, 'on'>;
  /** The WebSocket client: `frame` is emitted for every frame received, pings answered included. */
  ws: {
    readonly isOpen: boolean;
    on(event: 'frame', listener: () => void): unknown;
    /** The server's acknowledgement of a message stanza it took (Baileys names frame events `CB:<tag>,<attr>:<value>`). */
    on(event: 'CB:ack,class:message', listener: (node: { attrs: { id?: string } }) => void): unknown;
    /** The HTTP answer when the WebSocket upgrade was refused (e.g. a proxy's 407). */
    on(
      event: 'unexpected-response',
      listener: (request: unknown, response: { statusCode?: number; statusMessage?: string }) => void,
    ): unknown;
  };
  sendMessage(
    jid: string,
    content: AnyMessageContent,
    options?: MiscMessageGenerationOptions,
  ): Promise<WAMessage | undefined>;
  onWhatsApp(...numbers: string[]): Promise<Array<{ jid: string; exists: boolean }> | undefined>;
  profilePictureUrl(jid: string, type?: 'preview' | 'image', timeoutMs?: number): Promise<string | undefined>;
  /** Unlinks this companion device, then ends the socket with 401. */
  logout(message?: string): Promise<void>;
  /** Ends the socket; `connection.update` reports `close` with this error as `lastDisconnect.error`. */
  end(error: Error | undefined): Promise<void> | void;
  signalRepository: { lidMapping: { getPNForLID(lid: string): Promise<string | null> } };
  /** Read receipts. */
  readMessages?(keys: WAMessageKey[]): Promise<void>;
  /** Typing / recording / paused in a chat, or available / unavailable for the account. */
  sendPresenceUpdate?(type: WAPresence, toJid?: string): Promise<void>;
  /** Asks the sender's phone to upload media again when its link has expired. */
  updateMediaMessage?(message: WAMessage): Promise<WAMessage>;
  /** Links by a code typed on the phone (the socket must be connected and unregistered): answers the 8-character code. */
  requestPairingCode?(phoneNumber: string, customPairingCode?: string): Promise<string>;
  // The account (src/engines/baileys/account.ts).
  updateProfileName?(name: string): Promise<void>;
  updateProfileStatus?(status: string): Promise<void>;
  fetchStatus?(...jids: string[]): Promise<Array<{ id: string; [protocol: string]: unknown }> | undefined>;
  updateBlockStatus?(jid: string, action: 'block' | 'unblock'): Promise<void>;
  fetchBlocklist?(): Promise<Array<string | undefined>>;
  rejectCall?(callId: string, callFrom: string): Promise<void>;
  // Groups (src/engines/baileys/groups.ts).
  groupCreate?(subject: string, participants: string[]): Promise<GroupMetadata>;
  groupMetadata?(jid: string): Promise<GroupMetadata>;
  groupParticipantsUpdate?(
    jid: string,
    participants: string[],
    action: ParticipantAction,
  ): Promise<Array<{ status: string; jid: string | undefined }>>;
  groupUpdateSubject?(jid: string, subject: string): Promise<void>;
  groupUpdateDescription?(jid: string, description?: string): Promise<void>;
  groupSettingUpdate?(jid: string, setting: 'announcement' | 'not_announcement' | 'locked' | 'unlocked'): Promise<void>;
  groupInviteCode?(jid: string): Promise<string | undefined>;
  groupRevokeInvite?(jid: string): Promise<string | undefined>;
  groupAcceptInvite?(code: string): Promise<string | undefined>;
  groupLeave?(jid: string): Promise<void>;
  groupFetchAllParticipating?(): Promise<{ [groupId: string]: GroupMetadata }>;
  // Chats (src/engines/baileys/chats.ts).
  chatModify?(mod: ChatModification, jid: string): Promise<void>;
  /** Asks the phone for a chat's messages older than a message (its timestamp in ms); answered by `messaging-history.set`. */
  fetchMessageHistory?(count: number, oldestMsgKey: WAMessageKey, oldestMsgTimestamp: number): Promise<string>;
  groupToggleEphemeral?(jid: string, ephemeralExpiration: number): Promise<void>;
  groupJoinApprovalMode?(jid: string, mode: 'on' | 'off'): Promise<void>;
  groupMemberAddMode?(jid: string, mode: 'admin_add' | 'all_member_add'): Promise<void>;
  groupRequestParticipantsList?(jid: string): Promise<Array<{ [key: string]: string }>>;
  groupRequestParticipantsUpdate?(
    jid: string,
    participants: string[],
    action: 'approve' | 'reject',
  ): Promise<Array<{ status: string; jid: string | undefined }>>;
  updateProfilePicture?(jid: string, content: Buffer): Promise<void>;
  removeProfilePicture?(jid: string): Promise<void>;
  /** Asks the network to tell this account a contact's presence changes (presence.update). */
  presenceSubscribe?(jid: string): Promise<void>;
  // Channels (src/engines/baileys/channels.ts); their answers are read loosely (see there).
  newsletterCreate?(name: string, description?: string): Promise<unknown>;
  newsletterMetadata?(type: 'invite' | 'jid', key: string): Promise<unknown>;
  newsletterFollow?(jid: string): Promise<unknown>;
  newsletterUnfollow?(jid: string): Promise<unknown>;
  newsletterMute?(jid: string): Promise<unknown>;
  newsletterUnmute?(jid: string): Promise<unknown>;
  newsletterUpdateName?(jid: string, name: string): Promise<unknown>;
  newsletterUpdateDescription?(jid: string, description: string): Promise<unknown>;
  newsletterFetchMessages?(jid: string, count: number, since: number, after: number): Promise<unknown>;
  /** A reaction to a post, which WhatsApp addresses by the post's server id; no `reaction` takes it back. */
  newsletterReactMessage?(jid: string, serverId: string, reaction?: string): Promise<void>;
}

export type SocketFactory = (config: UserFacingSocketConfig) => BaileysSocket;
