/**
 * A stand-in for a Baileys socket that follows its event contract (same event names and payloads on
 * `ev`, `frame` on `ws`, Boom-shaped close errors, creds mutated in place before `creds.update`), for the
 * paths a local server cannot exercise: QR pairing, receipts, lookups, avatars, logouts and every
 * disconnect code.
 */
import { EventEmitter } from 'node:events';
import type {
  AnyMessageContent,
  AuthenticationCreds,
  BaileysEventMap,
  ChatModification,
  GroupMetadata,
  MiscMessageGenerationOptions,
  ParticipantAction,
  UserFacingSocketConfig,
  WAMessage,
  WAMessageKey,
  WAPresence,
} from 'baileys';
import type { BaileysSocket, SocketFactory } from '../../../../src/engines/baileys/baileys-socket.js';

export interface SentMessage {
  jid: string;
  content: AnyMessageContent;
  options: MiscMessageGenerationOptions | undefined;
}

/** What Baileys closes sockets with: a Boom, whose output.statusCode is a DisconnectReason. */
export function boom(statusCode: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), {
    isBoom: true,
    data,
    output: { statusCode, payload: { statusCode, message } },
  });
}

class FakeWebSocket extends EventEmitter {
  isOpen = true;
}

class FakeEventEmitter {
  private readonly emitter = new EventEmitter();

  on<T extends keyof BaileysEventMap>(event: T, listener: (arg: BaileysEventMap[T]) => void): void {
    this.emitter.on(event, listener);
  }

  emit<T extends keyof BaileysEventMap>(event: T, arg: BaileysEventMap[T]): boolean {
    return this.emitter.emit(event, arg);
  }
}

export class FakeSocket implements BaileysSocket {
  readonly ev = new FakeEventEmitter();
  readonly ws = new FakeWebSocket();
  readonly sent: SentMessage[] = [];
  readonly lookups: string[][] = [];
  readonly endedWith: Array<Error | undefined> = [];
  loggedOut = false;
  private closed = false;

  /** onWhatsApp answers by number; a number not listed gets an empty answer (as when WhatsApp says nothing). */
  readonly whatsAppUsers = new Map<string, boolean>();
  /** profilePictureUrl answers by JID: a URL, undefined (no picture node), or an error to throw. */
  readonly pictures = new Map<string, string | undefined | Error>();
  /** LID → phone-number JID, as Baileys' LID mapping store answers. */
  readonly lidToPhone = new Map<string, string>();
  sendFailure: Error | undefined;

  readonly signalRepository = {
    lidMapping: { getPNForLID: async (lid: string) => this.lidToPhone.get(lid) ?? null },
  };

  constructor(readonly config: UserFacingSocketConfig) {}

  get creds(): AuthenticationCreds {
    return this.config.auth.creds;
  }

  // ---- what the engine calls ----

  async sendMessage(
    jid: string,
    content: AnyMessageContent,
    options?: MiscMessageGenerationOptions,
  ): Promise<WAMessage | undefined> {
    if (this.sendFailure) throw this.sendFailure;
    this.sent.push({ jid, content, options });
    return { key: { remoteJid: jid, fromMe: true, id: options?.messageId ?? 'generated' } };
  }

  readonly reads: WAMessageKey[][] = [];
  readonly presences: Array<{ type: WAPresence; toJid?: string }> = [];

  /** Every chatModify call, and an error the next one throws (then cleared). */
  readonly chatMods: Array<{ mod: ChatModification; jid: string }> = [];
  chatModifyFailure: Error | undefined;
  /** What Baileys' emitOwnEvents does: emits the change applied locally, as it would the phone's, before answering. */
  chatModifyEcho: ((mod: ChatModification, jid: string) => void) | undefined;

  async chatModify(mod: ChatModification, jid: string): Promise<void> {
    const failure = this.chatModifyFailure;
    this.chatModifyFailure = undefined;
    if (failure) throw failure;
    this.chatMods.push({ mod, jid });
    this.chatModifyEcho?.(mod, jid);
  }

  /** Every fetchMessageHistory call: the phone's answer is emitted by the test, as `messaging-history.set`. */
  readonly historyRequests: Array<{ count: number; key: WAMessageKey; timestampMs: number }> = [];

  async fetchMessageHistory(count: number, key: WAMessageKey, timestampMs: number): Promise<string> {
    this.historyRequests.push({ count, key, timestampMs });
    return `pdo-${this.historyRequests.length}`;
  }

  async readMessages(keys: WAMessageKey[]): Promise<void> {
    this.reads.push(keys);
  }

  async sendPresenceUpdate(type: WAPresence, toJid?: string): Promise<void> {
    this.presences.push({ type, ...(toJid === undefined ? {} : { toJid }) });
  }

  async onWhatsApp(...numbers: string[]): Promise<Array<{ jid: string; exists: boolean }> | undefined> {
    this.lookups.push(numbers);
    return numbers
      .filter((n) => this.whatsAppUsers.has(n))
      .map((n) => ({ jid: `${n}@s.whatsapp.net`, exists: this.whatsAppUsers.get(n)! }));
  }

  async profilePictureUrl(jid: string): Promise<string | undefined> {
    const picture = this.pictures.get(jid);
    if (picture instanceof Error) throw picture;
    return picture;
  }

  // ---- the account ----
  readonly accountCalls: Array<{ method: string; args: unknown[] }> = [];
  /** fetchStatus answers by jid: a text, null (none), or an error to throw. */
  readonly statuses = new Map<string, string | null | Error>();
  readonly blocklist = new Set<string>();
  readonly rejectedCalls: Array<{ callId: string; from: string }> = [];

  async updateProfileName(name: string): Promise<void> {
    this.accountCalls.push({ method: 'updateProfileName', args: [name] });
  }

  async updateProfileStatus(status: string): Promise<void> {
    this.accountCalls.push({ method: 'updateProfileStatus', args: [status] });
  }

  async fetchStatus(...jids: string[]): Promise<Array<{ id: string; [protocol: string]: unknown }> | undefined> {
    this.accountCalls.push({ method: 'fetchStatus', args: jids });
    return jids.map((id) => {
      const status = this.statuses.get(id);
      if (status instanceof Error) throw status;
      return { id, status: { status: status ?? null, setAt: new Date(0) } };
    });
  }

  async updateBlockStatus(jid: string, action: 'block' | 'unblock'): Promise<void> {
    this.accountCalls.push({ method: 'updateBlockStatus', args: [jid, action] });
    if (action === 'block') this.blocklist.add(jid);
    else this.blocklist.delete(jid);
  }

  async fetchBlocklist(): Promise<Array<string | undefined>> {
    return [...this.blocklist];
  }

  async rejectCall(callId: string, callFrom: string): Promise<void> {
    this.rejectedCalls.push({ callId, from: callFrom });
  }

  readonly pairingRequests: string[] = [];

  async requestPairingCode(phoneNumber: string): Promise<string> {
    this.pairingRequests.push(phoneNumber);
    return `PAIR${String(this.pairingRequests.length).padStart(4, '0')}`;
  }

  // ---- groups: what the "server" holds, and every call made ----

  readonly groups = new Map<string, GroupMetadata>();
  readonly groupCalls: Array<{ method: string; args: unknown[] }> = [];
  /** Thrown by the next group call, then cleared (a refusal of the server). */
  groupFailure: Error | undefined;
  /** The JID WhatsApp names in its answer to a join request of an asked one (a LID), and answers out of order. */
  readonly answeredAs = new Map<string, string>();
  answersReversed = false;
  /** Answered by groupParticipantsUpdate per jid (default 200). */
  readonly participantStatus = new Map<string, string>();
  inviteCodes = new Map<string, string>();

  private groupCall(method: string, ...args: unknown[]): void {
    this.groupCalls.push({ method, args });
    const failure = this.groupFailure;
    this.groupFailure = undefined;
    if (failure) throw failure;
  }

  private group(jid: string): GroupMetadata {
    const group = this.groups.get(jid);
    if (!group) throw boom(404, 'item-not-found', 404);
    return group;
  }

  async groupCreate(subject: string, participants: string[]): Promise<GroupMetadata> {
    this.groupCall('groupCreate', subject, participants);
    const id = `120363${String(this.groups.size + 1).padStart(12, '0')}@g.us`;
    const me = this.creds.me!.id.replace(/:\d+@/, '@');
    const group: GroupMetadata = {
      id,
      subject,
      owner: me,
      participants: [
        { id: me, admin: 'superadmin' },
        ...participants.filter((p) => this.participantStatus.get(p) !== '403').map((p) => ({ id: p, admin: null })),
      ],
    };
    this.groups.set(id, group);
    return group;
  }

  async groupMetadata(jid: string): Promise<GroupMetadata> {
    this.groupCall('groupMetadata', jid);
    return this.group(jid);
  }

  async groupParticipantsUpdate(
    jid: string,
    participants: string[],
    action: ParticipantAction,
  ): Promise<Array<{ status: string; jid: string | undefined }>> {
    this.groupCall('groupParticipantsUpdate', jid, participants, action);
    this.group(jid);
    return participants.map((p) => ({ status: this.participantStatus.get(p) ?? '200', jid: p }));
  }

  async groupUpdateSubject(jid: string, subject: string): Promise<void> {
    this.groupCall('groupUpdateSubject', jid, subject);
    this.group(jid).subject = subject;
  }

  async groupUpdateDescription(jid: string, description?: string): Promise<void> {
    this.groupCall('groupUpdateDescription', jid, description);
  }

  async groupSettingUpdate(
    jid: string,
    setting: 'announcement' | 'not_announcement' | 'locked' | 'unlocked',
  ): Promise<void> {
    this.groupCall('groupSettingUpdate', jid, setting);
  }

  async groupInviteCode(jid: string): Promise<string | undefined> {
    this.groupCall('groupInviteCode', jid);
    this.group(jid);
    return this.inviteCodes.get(jid) ?? 'AbCdEfGhIjKlMnOpQrStUv';
  }

  async groupRevokeInvite(jid: string): Promise<string | undefined> {
    this.groupCall('groupRevokeInvite', jid);
    this.group(jid);
    this.inviteCodes.set(jid, 'NewCodeNewCodeNewCode1');
    return this.inviteCodes.get(jid);
  }

  async groupAcceptInvite(code: string): Promise<string | undefined> {
    this.groupCall('groupAcceptInvite', code);
    for (const [jid, known] of this.inviteCodes) if (known === code) return jid;
    throw boom(400, 'not-found', 404);
  }

  async groupLeave(jid: string): Promise<void> {
    this.groupCall('groupLeave', jid);
    this.group(jid);
    this.groups.delete(jid);
  }

  async groupFetchAllParticipating(): Promise<{ [id: string]: GroupMetadata }> {
    this.groupCall('groupFetchAllParticipating');
    return Object.fromEntries(this.groups);
  }

  async groupToggleEphemeral(jid: string, seconds: number): Promise<void> {
    this.groupCall('groupToggleEphemeral', jid, seconds);
  }

  async groupJoinApprovalMode(jid: string, mode: 'on' | 'off'): Promise<void> {
    this.groupCall('groupJoinApprovalMode', jid, mode);
  }

  async groupMemberAddMode(jid: string, mode: 'admin_add' | 'all_member_add'): Promise<void> {
    this.groupCall('groupMemberAddMode', jid, mode);
  }

  /** Pending join requests per group, as the server lists them (`jid`, `phone_number`, `request_time`). */
  readonly joinRequests = new Map<string, Array<{ [key: string]: string }>>();

  async groupRequestParticipantsList(jid: string): Promise<Array<{ [key: string]: string }>> {
    this.groupCall('groupRequestParticipantsList', jid);
    this.group(jid);
    return this.joinRequests.get(jid) ?? [];
  }

  async groupRequestParticipantsUpdate(
    jid: string,
    participants: string[],
    action: 'approve' | 'reject',
  ): Promise<Array<{ status: string; jid: string | undefined }>> {
    this.groupCall('groupRequestParticipantsUpdate', jid, participants, action);
    const pending = this.joinRequests.get(jid) ?? [];
    const answers = participants.map((p) => ({
      status: pending.some((r) => r.jid === p) ? '200' : '404',
      jid: this.answeredAs.get(p) ?? p,
    }));
    return this.answersReversed ? answers.reverse() : answers;
  }

  async updateProfilePicture(jid: string, content: Buffer): Promise<void> {
    this.groupCall('updateProfilePicture', jid, content.length);
  }

  async removeProfilePicture(jid: string): Promise<void> {
    this.groupCall('removeProfilePicture', jid);
  }

  // ---- channels (newsletters): what the "server" answers, in WhatsApp's own (MEX) shape, and every call made ----

  /** newsletterMetadata answers by jid or invite code (absent: null, as Baileys answers an unknown one). */
  readonly newsletters = new Map<string, unknown>();
  /** newsletterFetchMessages answers this node (a real `<messages>` answer). */
  newsletterPage: unknown;
  readonly newsletterCalls: Array<{ method: string; args: unknown[] }> = [];
  /** Thrown by the next newsletter call, then cleared. */
  newsletterFailure: Error | undefined;

  private newsletterCall(method: string, ...args: unknown[]): void {
    this.newsletterCalls.push({ method, args });
    const failure = this.newsletterFailure;
    this.newsletterFailure = undefined;
    if (failure) throw failure;
  }

  async newsletterCreate(name: string, description?: string): Promise<unknown> {
    this.newsletterCall('newsletterCreate', name, description);
    // Baileys' parseNewsletterCreateResponse: flattened.
    return {
      id: '120363000000000077@newsletter',
      name,
      description: description ?? '',
      invite: 'CODE77',
      subscribers: 0,
      mute_state: 'OFF',
    };
  }

  async newsletterMetadata(type: 'invite' | 'jid', key: string): Promise<unknown> {
    this.newsletterCall('newsletterMetadata', type, key);
    return this.newsletters.get(key) ?? null;
  }

  async newsletterFollow(jid: string): Promise<unknown> {
    this.newsletterCall('newsletterFollow', jid);
    return {};
  }

  async newsletterUnfollow(jid: string): Promise<unknown> {
    this.newsletterCall('newsletterUnfollow', jid);
    return {};
  }

  async newsletterMute(jid: string): Promise<unknown> {
    this.newsletterCall('newsletterMute', jid);
    return {};
  }

  async newsletterUnmute(jid: string): Promise<unknown> {
    this.newsletterCall('newsletterUnmute', jid);
    return {};
  }

  async newsletterUpdateName(jid: string, name: string): Promise<unknown> {
    this.newsletterCall('newsletterUpdateName', jid, name);
    return {};
  }

  async newsletterUpdateDescription(jid: string, description: string): Promise<unknown> {
    this.newsletterCall('newsletterUpdateDescription', jid, description);
    return {};
  }

  async newsletterFetchMessages(jid: string, count: number, since: number, after: number): Promise<unknown> {
    this.newsletterCall('newsletterFetchMessages', jid, count, since, after);
    return this.newsletterPage;
  }

  async newsletterReactMessage(jid: string, serverId: string, reaction?: string): Promise<void> {
    this.newsletterCall('newsletterReactMessage', jid, serverId, reaction);
  }

  readonly presenceSubscriptions: string[] = [];

  async presenceSubscribe(jid: string): Promise<void> {
    this.presenceSubscriptions.push(jid);
  }

  async logout(): Promise<void> {
    this.loggedOut = true;
    await this.end(boom(401, 'Intentional Logout'));
  }

  async end(error: Error | undefined): Promise<void> {
    this.endedWith.push(error);
    if (this.closed) return;
    this.closed = true;
    this.ws.isOpen = false;
    this.ev.emit('connection.update', { connection: 'close', lastDisconnect: { error, date: new Date() } });
  }

  // ---- what the "server" does ----

  /** Logs in with the stored creds (they must carry `me`), as Baileys does on CB:success. */
  open(lid = '99999999999@lid'): void {
    this.ev.emit('connection.update', { connection: 'connecting', receivedPendingNotifications: false });
    this.updateCreds({ me: { ...this.creds.me!, lid } });
    this.frame();
    this.ev.emit('connection.update', { connection: 'open' });
  }

  showQr(code: string): void {
    this.ev.emit('connection.update', { qr: code });
  }

  /** The phone scanned the QR: Baileys stores the account and WhatsApp asks for a restart (515). */
  pair(meJid: string, name?: string): void {
    this.updateCreds({ me: { id: meJid, ...(name ? { name } : {}) }, registered: true });
    this.ev.emit('connection.update', { isNewLogin: true, qr: undefined });
    void this.end(boom(515, 'Stream Errored (restart required)'));
  }

  /** The server closes the connection with a status code (undefined: no error at all). */
  closeWith(statusCode: number | undefined, message = 'closed by server'): void {
    void this.end(statusCode === undefined ? undefined : boom(statusCode, message));
  }

  /** A frame arrived (Baileys emits `frame` on its WebSocket client for each one). */
  frame(): void {
    this.ws.emit('frame', {});
  }

  updateCreds(update: Partial<AuthenticationCreds>): void {
    Object.assign(this.creds, update); // Baileys' own creds.update listener, registered first
    this.ev.emit('creds.update', update);
  }

  emit<T extends keyof BaileysEventMap>(event: T, arg: BaileysEventMap[T]): void {
    this.ev.emit(event, arg);
  }
}

/** A socket factory that keeps every socket it made, newest last. */
export function fakeSocketFactory(): { factory: SocketFactory; sockets: FakeSocket[]; latest(): FakeSocket } {
  const sockets: FakeSocket[] = [];
  return {
    sockets,
    factory: (config) => {
      const socket = new FakeSocket(config);
      sockets.push(socket);
      return socket;
    },
    latest: () => {
      const socket = sockets.at(-1);
      if (!socket) throw new Error('no socket made yet');
      return socket;
    },
  };
}
