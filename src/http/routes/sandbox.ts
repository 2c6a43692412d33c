/**
 * What the phone and the network do to a sandbox device (docs/api-guide.md, "Sessions and the sandbox engine"), for tests and
 * integrations without a phone. Admin only.
 */
import Type from 'typebox';
import type { Supervisor } from '../../actors/supervisor.js';
import type { SandboxEngine } from '../../engines/sandbox/sandbox-engine.js';
import type { ReadModelProgress } from '../../projections/projection-runner.js';
import { sessionNotOnline } from '../../errors/domain-error.js';
import { StoreUnavailableError } from '../../eventstore/event-store.js';
import type { StorageHealth } from '../../storage/storage-health.js';
import { insufficientStorage, problemOf } from '../error-table.js';
import { Problem, conflict, invalidRequest } from '../problem.js';
import { type RequestDevice, type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { SessionStateOnlySchema } from '../schemas/session.js';
import {
  SandboxPairBody,
  SandboxGroupBody,
  SandboxGroupSchema,
  AcceptedSchema,
  InboundAcceptedSchema,
  InboundBody,
  SandboxCallBody,
  SandboxStatusViewBody,
  SandboxCallSchema,
  SandboxChatUpdateBody,
  SandboxHistoryBody,
  SandboxPresenceBody,
  ScanBody,
} from '../schemas/sandbox.js';
import { createHash, randomBytes } from 'node:crypto';
import { isGroupId } from '../../messages/chat-id.js';
import type { Static } from 'typebox';
import type { InboundMessage, QuotedMessage } from '../../engines/engine.js';
import { newSandboxMessageId } from '../../engines/sandbox/sandbox-network.js';
import type { SeenMessages } from '../../outbox/commands/seen-messages.js';
import type { BodyGate } from '../body/body-gate.js';
import { mediaBodyParser, uploadedMedia } from '../body/media-body-parser.js';
import { type HeldMedia, SandboxMedia } from '../../engines/sandbox/sandbox-media.js';
import type { ChatActivity } from '../../engines/engine.js';
import type { SandboxHistoryChunk } from '../../engines/sandbox/sandbox-engine.js';
import { type OwnerCalls, outcomeUnknown } from '../../cluster/owner-calls.js';

const DeafenBody = Type.Object(
  { on: Type.Boolean({ description: 'true: deaf; false: hears again.' }) },
  { additionalProperties: false },
);
const DeafenSchema = Type.Object({ deaf: Type.Boolean() });

const tag = 'Sandbox';

export interface SandboxRouteDeps {
  sessions: Supervisor;
  sandbox: SandboxEngine;
  projections: ReadModelProgress;
  /**
   * The simulated network of a device is in the process that runs it: with several processes, what the phone and
   * the network do is carried to the device's owner and answered from there (src/cluster/owner-calls.ts).
   */
  calls: OwnerCalls;
  /** What a quoted message said (`quotedMessageId`). */
  seen?: SeenMessages;
  /** Whether writes fail now (src/storage/storage-health.ts). */
  storage?: Pick<StorageHealth, 'writeFailure'>;
  /** The inbound route takes media as base64 up to this many bytes; its body is parsed after authentication. */
  inboundMedia?: {
    limit: number;
    uploadDir: string;
    gate: BodyGate;
    /** Whether the device will try again later to download a recorded message's media (it has not stored it). */
    downloadPending?: (deviceId: string, waMessageId: string) => Promise<boolean>;
  };
}

const NOT_FOUND = { description: 'No such device.' };
const SANDBOX_NOT_ONLINE = {
  description: 'Not a sandbox device (`not_sandbox_device`), or the session is not online (`session_not_online`).',
};

type InboundSpec = Static<typeof InboundBody>;

/** The message an inbound request describes (types `edit`, `revoke` and `poll_vote` are activities, handled apart). */
function inboundOf(
  body: InboundSpec,
  quoted: QuotedMessage | undefined,
  mediaBytes: SandboxMedia | undefined,
): Omit<InboundMessage, 'waMessageId' | 'timestamp'> {
  const type = (body.type ??
    (body.poll ? 'poll' : body.location ? 'location' : body.contacts ? 'contact' : 'text')) as InboundMessage['type'];
  const message: Omit<InboundMessage, 'waMessageId' | 'timestamp'> = {
    from: body.from,
    type,
    body: body.body ?? body.poll?.question ?? '',
  };
  if (body.chatId) message.chatId = body.chatId;
  if (quoted) message.quoted = quoted;
  if (body.mentions?.length) message.mentions = body.mentions;
  if (body.location) message.location = body.location;
  if (body.contacts) message.contacts = body.contacts;
  if (type === 'reaction' && body.messageId) message.reaction = { messageId: body.messageId, emoji: body.body ?? '' };
  if (body.poll) {
    message.poll = {
      question: body.poll.question,
      options: body.poll.options,
      multipleAnswers: body.poll.multipleAnswers === true,
    };
    message.secret = randomBytes(32).toString('base64');
  }
  if (body.media && mediaBytes) {
    message.media = {
      mimetype: body.media.mimetype,
      size: mediaBytes.size,
      ...(body.media.filename ? { filename: body.media.filename } : {}),
    };
    message.downloadMedia = () => mediaBytes.open();
  }
  return message;
}

/**
 * The bytes of `media.base64`: streamed to a file by the body parser (so the JSON around it stays small),
 * or decoded here where the route has no media parser. The device downloads them from that file (see
 * SandboxMedia), never holding them whole in memory while the message waits its turn to be recorded.
 */
async function mediaOf(
  media: InboundSpec['media'],
  spooled: ReturnType<typeof uploadedMedia>,
): Promise<SandboxMedia | undefined> {
  if (!media) return undefined;
  if (spooled) {
    if (spooled.size === 0)
      throw invalidRequest('body/media/base64 is not base64', [
        { path: '/media/base64', message: 'is empty or not base64' },
      ]);
    return SandboxMedia.fromFile(spooled.path, `${spooled.path}.sandbox`, spooled.size);
  }
  const bytes = media.base64 ? Buffer.from(media.base64.replace(/^data:[^,]*,/, ''), 'base64') : undefined;
  if (bytes === undefined)
    throw invalidRequest('body/media/base64 is required', [{ path: '/media/base64', message: 'is required' }]);
  if (bytes.length === 0)
    throw invalidRequest('body/media/base64 is not base64', [
      { path: '/media/base64', message: 'is empty or not base64' },
    ]);
  return SandboxMedia.inMemory(bytes);
}

/** A device just taken over, or opened, is on its way to showing its code: a scan waits this long for it. */
const QR_WAIT_MS = 5_000;
const QR_POLL_MS = 50;

/** The owner's word on a device after the network acted: its state once it reacted, and where that is in the log. */
interface Reaction {
  state?: string;
  position?: number;
}

const required = (field: string, type: string) =>
  invalidRequest(`body/${field} is required for type ${type}`, [
    { path: `/${field}`, message: `is required for type ${type}` },
  ]);

export function sandboxRoutes({
  sessions,
  sandbox,
  projections,
  calls,
  seen,
  inboundMedia,
  storage,
}: SandboxRouteDeps): RouteSpec[] {
  /** 409 `not_sandbox_device` for devices of another engine (the router answered 404 for unknown ones). */
  const requireSandboxDevice = ({ id, view }: RequestDevice) => {
    if (view.engine !== 'sandbox')
      throw conflict('not_sandbox_device', `device "${id}" uses the ${view.engine} engine, not the sandbox`);
  };
  /** Refused for want of an online session, in the words of the state its owner (or else the log) knows. */
  // While writes fail, a session that is not online is most likely so because of it (its intake held, or its
  // reconnect not recorded): the store's answer says when to try again, as a send's does.
  const notOnline = (device: RequestDevice, reaction: Reaction = {}) => {
    const failure = storage?.writeFailure;
    if (failure === 'space') return insufficientStorage();
    if (failure === 'store') return problemOf(new StoreUnavailableError('the store cannot record now'))!;
    return sessionNotOnline(reaction.state ?? device.sessionState());
  };
  /** At the owner: the state the device reacted with to what the network just did. */
  const reactionOf = async (deviceId: string): Promise<Reaction> => {
    const settled = await sessions.settled(deviceId);
    const state = settled?.state ?? sessions.state(deviceId);
    return { ...(state ? { state } : {}), ...(settled?.position ? { position: settled.position } : {}) };
  };
  /** The state as the owner knows it (undefined where it does not run the device). */
  const stateHere = (deviceId: string): Reaction => {
    const state = sessions.state(deviceId);
    return state ? { state } : {};
  };
  /** The device has reacted to what the network just did; answer its state, readable everywhere (read your writes). */
  const answer = async (device: RequestDevice, reaction: Reaction) => {
    if (reaction.position) await projections.settle(reaction.position);
    return { status: 202, body: { state: reaction.state ?? device.sessionState() } };
  };

  // What the phone and the network do, each run by the device's owner (where its simulated connection is).
  const scan = calls.define('sandbox.scan', 'once', async (deviceId: string, phone: string) => {
    const deadline = Date.now() + QR_WAIT_MS;
    for (;;) {
      const outcome = await sandbox.scan(deviceId, phone);
      if (outcome === 'paired') return { outcome, ...(await reactionOf(deviceId)) };
      const state = sessions.state(deviceId);
      // A device just taken over (devices are balanced as processes join) shows its code again in a moment.
      if (outcome === 'no_qr' && (state === 'connecting' || state === 'qr') && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, QR_POLL_MS));
        continue;
      }
      return { outcome, ...stateHere(deviceId) };
    }
  });
  const enterCode = calls.define('sandbox.pair', 'once', async (deviceId: string, code: string) => {
    const outcome = await sandbox.enterPairingCode(deviceId, code);
    return { outcome, ...(outcome === 'paired' ? await reactionOf(deviceId) : stateHere(deviceId)) };
  });
  const receive = calls.define(
    'sandbox.inbound',
    'once',
    async (deviceId: string, message: InboundMessage, held: HeldMedia | undefined) => {
      const media = held === undefined ? undefined : SandboxMedia.described(held);
      let accepted: Awaited<ReturnType<SandboxEngine['inbound']>> | undefined;
      try {
        accepted = await sandbox.inbound(deviceId, media ? { ...message, downloadMedia: () => media.open() } : message);
      } finally {
        // Recorded (or refused): the bytes are kept only for the device's later download attempts, if any.
        const laterTries =
          media !== undefined &&
          accepted !== undefined &&
          ((await inboundMedia?.downloadPending?.(deviceId, message.waMessageId)) ?? false);
        await media?.release(laterTries);
      }
      return accepted ? { accepted } : stateHere(deviceId);
    },
  );
  const act = calls.define('sandbox.activity', 'once', async (deviceId: string, activity: ChatActivity) => ({
    done: sandbox.activity(deviceId, activity),
    ...stateHere(deviceId),
  }));
  const syncHistory = calls.define('sandbox.history', 'once', async (deviceId: string, chunk: SandboxHistoryChunk) => ({
    done: await sandbox.history(deviceId, chunk),
    ...stateHere(deviceId),
  }));
  const ring = calls.define(
    'sandbox.call',
    'once',
    async (deviceId: string, call: { callId: string; from: string; isVideo: boolean }) => ({
      done: sandbox.call(deviceId, call),
      ...stateHere(deviceId),
    }),
  );
  const viewStatus = calls.define(
    'sandbox.status-view',
    'once',
    async (deviceId: string, view: { from: string; waMessageId: string }) => ({
      done: sandbox.statusView(deviceId, view.from, view.waMessageId),
      ...stateHere(deviceId),
    }),
  );
  const disconnect = calls.define('sandbox.disconnect', 'once', async (deviceId: string) => {
    const done = sandbox.disconnect(deviceId);
    return { done, ...(done ? await reactionOf(deviceId) : stateHere(deviceId)) };
  });
  const deafen = calls.define('sandbox.deafen', 'repeatable', async (deviceId: string, on: boolean) => {
    sandbox.deafen(deviceId, on);
    return { deaf: on };
  });
  const unlink = calls.define('sandbox.logout', 'once', async (deviceId: string) => {
    const outcome = await sandbox.logout(deviceId);
    return { outcome, ...(outcome === 'unlinked' ? await reactionOf(deviceId) : stateHere(deviceId)) };
  });

  return [
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/scan',
      operationId: 'sandboxScan',
      tag,
      summary: 'Scan the QR code with a phone',
      description:
        'The phone `phone` scans the code the device shows: the credentials are stored, and the session goes `connecting` (the answer) → `online` with that number. ' +
        'Only while a code is on show (state `qr`); otherwise `409 qr_unavailable` with the current state in `detail`. A number ending in 0000 does not exist: `400`.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      body: ScanBody,
      responses: {
        202: {
          description: "Scanned: the device's state once it reacted (`connecting`).",
          schema: SessionStateOnlySchema,
        },
        404: NOT_FOUND,
        409: { description: 'Not a sandbox device (`not_sandbox_device`), or no code on show (`qr_unavailable`).' },
      },
      async handler({ params, body, device }) {
        requireSandboxDevice(device);
        const { outcome, ...reaction } = await scan(params.deviceId, body.phone);
        if (outcome === 'unknown_number') {
          throw invalidRequest('body/phone does not exist in the sandbox', [
            { path: '/phone', message: 'numbers ending in 0000 do not exist in the sandbox' },
          ]);
        }
        if (outcome === 'no_qr')
          throw conflict(
            'qr_unavailable',
            `the session is ${reaction.state ?? device.sessionState()}; a code can be scanned only in state qr`,
          );
        return answer(device, reaction);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/pair',
      operationId: 'sandboxPair',
      tag,
      summary: 'Enter the pairing code on the phone',
      description:
        'The phone enters the code the device shows (state `pairing`, after `POST /devices/{id}/session/pair`): the session goes `connecting` (the answer) → `online`, ' +
        'linked to the number the pairing asked for. A wrong code: `422 invalid_pairing_code`; no code on show: `409 pairing_unavailable`.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      body: SandboxPairBody,
      responses: {
        202: {
          description: "Linked: the device's state once it reacted (`connecting`).",
          schema: SessionStateOnlySchema,
        },
        404: NOT_FOUND,
        409: {
          description:
            'Not a sandbox device (`not_sandbox_device`), or no pairing code on show (`pairing_unavailable`).',
        },
        422: { description: 'Not the code on show (`invalid_pairing_code`).' },
      },
      async handler({ params, body, device }) {
        requireSandboxDevice(device);
        const { outcome, ...reaction } = await enterCode(params.deviceId, body.code);
        if (outcome === 'no_code')
          throw conflict(
            'pairing_unavailable',
            `the session is ${reaction.state ?? device.sessionState()}; a pairing code is entered only in state pairing`,
          );
        if (outcome === 'wrong_code')
          throw new Problem(422, 'invalid_pairing_code', 'this is not the pairing code the device shows');
        return answer(device, reaction);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/inbound',
      operationId: 'sandboxInbound',
      tag,
      summary: 'Receive a message',
      description:
        'A message from `from` reaches the device, which records it as `message.received` before this answers: a 202 is durable. ' +
        "When the store cannot take it, the answer is the store's error (`503 store_unavailable`, `507 insufficient_storage`) and the message is not recorded later: send it again. " +
        'With `chatId` a group id, it is a group message from the participant `from`. `media` (base64) is downloaded by the device as WhatsApp media would be. ' +
        'The types `edit`, `revoke` and `poll_vote` produce `message.edited`, `message.revoked` and `poll.vote`. ' +
        'Only while the session is `online`; otherwise `409 session_not_online`, or while the store cannot write (the session then reconnects) its error. A sender ending in 0000 does not exist: `400`.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      body: InboundBody,
      ...(inboundMedia
        ? {
            bodyParser: {
              parse: mediaBodyParser({
                kind: 'file',
                limit: inboundMedia.limit,
                uploadDir: inboundMedia.uploadDir,
                schema: InboundBody,
                gate: inboundMedia.gate,
                base64Path: ['media', 'base64'],
                textDigest: false,
              }),
            },
          }
        : {}),
      responses: {
        202: { description: 'Recorded by the device.', schema: InboundAcceptedSchema },
        404: NOT_FOUND,
        409: SANDBOX_NOT_ONLINE,
        503: { description: 'The store cannot take the message now (`store_unavailable`); it is not recorded.' },
        507: { description: 'The store has no room for the message (`insufficient_storage`); it is not recorded.' },
      },
      async handler({ params, body, device, ctx }) {
        requireSandboxDevice(device);
        if (body.from.endsWith('0000')) {
          throw invalidRequest('body/from does not exist in the sandbox', [
            { path: '/from', message: 'numbers ending in 0000 do not exist in the sandbox' },
          ]);
        }
        const timestamp = Math.floor(Date.now() / 1000);
        const chatId = body.chatId ?? body.from;
        const activityId = newSandboxMessageId();
        if (body.type === 'edit' || body.type === 'revoke') {
          if (!body.messageId) throw required('messageId', body.type);
          const base = { id: activityId, chatId, from: body.from, waMessageId: body.messageId, timestamp };
          const { done, ...reaction } = await act(
            params.deviceId,
            body.type === 'edit' ? { kind: 'edited', ...base, body: body.body ?? '' } : { kind: 'revoked', ...base },
          );
          if (!done) throw notOnline(device, reaction);
          return { status: 202, body: { waMessageId: activityId } };
        }
        if (body.type === 'poll_vote') {
          if (!body.pollMessageId) throw required('pollMessageId', body.type);
          const vote = {
            kind: 'poll_vote' as const,
            id: activityId,
            chatId,
            from: body.from,
            pollMessageId: body.pollMessageId,
            selectedOptions: body.selectedOptions ?? [],
            timestamp,
          };
          const { done, ...reaction } = await act(params.deviceId, vote);
          if (!done) throw notOnline(device, reaction);
          return { status: 202, body: { waMessageId: activityId } };
        }
        const type =
          body.type ?? (body.poll ? 'poll' : body.location ? 'location' : body.contacts ? 'contact' : 'text');
        const needs: Partial<Record<string, keyof InboundSpec>> = {
          text: 'body',
          link: 'body',
          image: 'media',
          video: 'media',
          audio: 'media',
          file: 'media',
          sticker: 'media',
          location: 'location',
          contact: 'contacts',
          poll: 'poll',
          reaction: 'messageId',
        };
        const field = needs[type];
        if (field && body[field] === undefined) throw required(field, type);
        const quotedSeen = body.quotedMessageId ? seen?.find(params.deviceId, body.quotedMessageId) : undefined;
        const quoted: QuotedMessage | undefined = body.quotedMessageId
          ? quotedSeen
            ? { waMessageId: body.quotedMessageId, from: quotedSeen.from, type: quotedSeen.type, body: quotedSeen.body }
            : { waMessageId: body.quotedMessageId, from: '', type: 'unknown', body: '' }
          : undefined;
        const media = await mediaOf(body.media, uploadedMedia(ctx));
        // Made here, once: the owner records the message under this id however often the request reaches it.
        const waMessageId = newSandboxMessageId();
        const { downloadMedia: _, ...message } = inboundOf(body, quoted, media);
        // The held upload is released by whoever runs the message (here, or the device's owner); one the owner never
        // ran (refused before it, given up at the deadline) is released here, once nobody can be reading it still.
        const release = () => media?.release(false).catch(() => undefined);
        let received: Awaited<ReturnType<typeof receive>>;
        try {
          received = await receive(params.deviceId, { ...message, waMessageId } as InboundMessage, media?.describe());
        } catch (error) {
          // Taken by the owner but not answered in time: it may be reading the file now, and releases it itself.
          if (!outcomeUnknown(error)) await release();
          throw error;
        }
        if (!('accepted' in received)) {
          await release();
          throw notOnline(device, received);
        }
        return { status: 202, body: received.accepted };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/groups',
      operationId: 'sandboxCreateGroup',
      tag,
      summary: 'Make a group in the simulated network',
      description:
        "A group whose `members` (numbers) receive its messages: every sandbox device online under a member's number gets a message sent to the group " +
        '(`chatId` = the group id, `120363` + 12 digits + `@g.us`).',
      access: 'admin',
      scope: 'manage',
      body: SandboxGroupBody,
      responses: { 201: { description: 'Made.', schema: SandboxGroupSchema } },
      handler({ body }) {
        return { status: 201, body: sandbox.createGroup(body.subject, body.members) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/presence',
      operationId: 'sandboxPresence',
      tag,
      summary: "A contact's presence",
      description:
        '`from` is typing, recording, paused, available or unavailable (in `chatId`, default the direct chat): the device records `presence.update`.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      body: SandboxPresenceBody,
      responses: {
        202: { description: 'On its way to the device.', schema: AcceptedSchema },
        404: NOT_FOUND,
        409: SANDBOX_NOT_ONLINE,
      },
      async handler({ params, body, device }) {
        requireSandboxDevice(device);
        const { done, ...reaction } = await act(params.deviceId, {
          kind: 'presence',
          chatId: body.chatId ?? body.from,
          from: body.from,
          state: body.state,
        });
        if (!done) throw notOnline(device, reaction);
        return { status: 202, body: { accepted: true } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/history',
      operationId: 'sandboxHistory',
      tag,
      summary: 'The phone sends a history sync',
      description:
        "A chunk of the account's history reaches the device, as WhatsApp sends one when a device links: its messages appear in their chats marked " +
        '`historical` (no `message.received`), then `history.synced`. The same chunk sent again records nothing. With the `historySync` setting `none` ' +
        'the device drops it. A message without `waMessageId` gets one derived from its chat, sender, timestamp and text (the same message in two chunks is one). ' +
        'Answered once recorded: a chunk the store refuses is refused (503, 507) and not recorded later.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      body: SandboxHistoryBody,
      responses: {
        202: { description: 'Recorded by the device (or dropped by its `historySync: none`).', schema: AcceptedSchema },
        404: NOT_FOUND,
        409: SANDBOX_NOT_ONLINE,
        503: { description: 'The store cannot record now (`store_unavailable`); nothing was recorded.' },
        507: { description: 'The disk is full (`insufficient_storage`); nothing was recorded.' },
      },
      async handler({ params, body, device }) {
        requireSandboxDevice(device);
        const syncId = createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 32);
        const chunk: SandboxHistoryChunk = {
          syncId,
          chats: body.chats.map((c) => ({ chatId: c.chatId, ...(c.name !== undefined ? { name: c.name } : {}) })),
          messages: body.chats.flatMap((chat) =>
            chat.messages.map((m) => {
              const isGroup = isGroupId(chat.chatId);
              const from = m.fromMe ? (device.view.session.phone ?? '') : (m.from ?? (isGroup ? '' : chat.chatId));
              return {
                ...(m.waMessageId !== undefined ? { waMessageId: m.waMessageId } : {}),
                chatId: chat.chatId,
                isGroup,
                from,
                ...(m.fromMe ? { fromMe: true } : {}),
                ...(isGroup && !m.fromMe && m.from ? { participant: m.from } : {}),
                type: m.type ?? 'text',
                body: m.body,
                timestamp: m.timestamp,
              };
            }),
          ),
          ...(body.progress !== undefined ? { progress: body.progress } : {}),
          final: body.final ?? true,
        };
        const { done, ...reaction } = await syncHistory(params.deviceId, chunk);
        if (!done) throw notOnline(device, reaction);
        return { status: 202, body: { accepted: true } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/chat-update',
      operationId: 'sandboxChatUpdate',
      tag,
      summary: 'The phone changes a chat',
      description:
        'The phone (or another linked device) archives, pins, mutes, marks (un)read, deletes or clears the chat, or deletes messages for this account: ' +
        'the device records `chat.updated`, `chat.deleted` and `message.deleted`.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      body: SandboxChatUpdateBody,
      responses: {
        202: { description: 'On its way to the device.', schema: AcceptedSchema },
        404: NOT_FOUND,
        409: SANDBOX_NOT_ONLINE,
      },
      async handler({ params, body, device }) {
        requireSandboxDevice(device);
        const { chatId, deleted, cleared, deletedMessageIds, ...settings } = body;
        const activities: ChatActivity[] = [];
        if (Object.keys(settings).length > 0) activities.push({ kind: 'chat_updated', chatId, ...settings });
        for (const waMessageId of deletedMessageIds ?? [])
          activities.push({ kind: 'message_deleted', chatId, waMessageId });
        if (cleared) activities.push({ kind: 'chat_deleted', chatId, cleared: true });
        if (deleted) activities.push({ kind: 'chat_deleted', chatId, cleared: false });
        for (const activity of activities) {
          const { done, ...reaction } = await act(params.deviceId, activity);
          if (!done) throw notOnline(device, reaction);
        }
        return { status: 202, body: { accepted: true } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/status-view',
      operationId: 'sandboxStatusView',
      tag,
      summary: "Another number views the device's status",
      description:
        '`from` views the status `waMessageId` that this device posted: the device gets its read receipt, and `GET /status` lists `from` among the viewers.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      body: SandboxStatusViewBody,
      responses: {
        202: { description: 'On its way to the device.', schema: AcceptedSchema },
        404: NOT_FOUND,
        409: SANDBOX_NOT_ONLINE,
      },
      async handler({ params, body, device }) {
        requireSandboxDevice(device);
        const { done, ...reaction } = await viewStatus(params.deviceId, body);
        if (!done) throw notOnline(device, reaction);
        return { status: 202, body: { accepted: true } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/call',
      operationId: 'sandboxCall',
      tag,
      summary: 'An incoming call',
      description:
        '`from` calls the device (video with `isVideo`): it records `call.received`, `rejected` when its settings reject calls (the caller then gets `rejectCallsMessage`).',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      body: SandboxCallBody,
      responses: {
        202: { description: 'Ringing.', schema: SandboxCallSchema },
        404: NOT_FOUND,
        409: SANDBOX_NOT_ONLINE,
      },
      async handler({ params, body, device }) {
        requireSandboxDevice(device);
        const callId = randomBytes(16).toString('hex').toUpperCase();
        const { done, ...reaction } = await ring(params.deviceId, {
          callId,
          from: body.from,
          isVideo: body.isVideo === true,
        });
        if (!done) throw notOnline(device, reaction);
        return { status: 202, body: { callId } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/deafen',
      operationId: 'sandboxDeafen',
      tag,
      summary: 'Make the device deaf (or hear again)',
      description:
        'With `on: true` the connection stays up (`online`) and nothing reaches the device or leaves it: no messages, receipts, presence; its sends seem to go ' +
        '(`sent`) and are never delivered. What the session watchdog (WATCHDOG_SILENCE) is for. `on: false` ends it. Kept across reconnects and reboots.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      body: DeafenBody,
      responses: {
        200: { description: 'Whether the device is deaf now.', schema: DeafenSchema },
        404: NOT_FOUND,
        409: { description: 'Not a sandbox device (`not_sandbox_device`).' },
      },
      async handler({ params, body, device }) {
        requireSandboxDevice(device);
        return { status: 200, body: await deafen(params.deviceId, body.on) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/disconnect',
      operationId: 'sandboxDisconnect',
      tag,
      summary: 'Drop the connection',
      description:
        "The network drops the device's connection unexpectedly: the session goes `reconnecting` (the answer), then `online` again after the reconnect delay " +
        '(SESSION_RECONNECT_BASE_DELAY_MS, with jitter). Only while the session is `online`; otherwise `409 session_not_online`.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      responses: {
        202: {
          description: "Dropped: the device's state once it reacted (`reconnecting`).",
          schema: SessionStateOnlySchema,
        },
        404: NOT_FOUND,
        409: SANDBOX_NOT_ONLINE,
      },
      async handler({ params, device }) {
        requireSandboxDevice(device);
        const { done, ...reaction } = await disconnect(params.deviceId);
        if (!done) throw notOnline(device, reaction);
        return answer(device, reaction);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/logout',
      operationId: 'sandboxLogout',
      tag,
      summary: 'Unlink the device from the phone',
      description:
        'The phone removes the linked device and its credentials stop working. Online: the session goes `logged_out` at once. Linked but not connected: ' +
        'the next open is told and goes `logged_out`. Nothing linked (never scanned, or already unlinked): `409 session_not_linked`.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      responses: {
        202: {
          description: "Unlinked: the device's state once it reacted (`logged_out` if it was online, else unchanged).",
          schema: SessionStateOnlySchema,
        },
        404: NOT_FOUND,
        409: {
          description: 'Not a sandbox device (`not_sandbox_device`), or no account is linked (`session_not_linked`).',
        },
      },
      async handler({ params, device }) {
        requireSandboxDevice(device);
        const { outcome, ...reaction } = await unlink(params.deviceId);
        if (outcome === 'not_linked') {
          throw conflict(
            'session_not_linked',
            `no account is linked to device "${params.deviceId}" (the session is ${reaction.state ?? device.sessionState()})`,
          );
        }
        return answer(device, reaction);
      },
    }),
  ];
}
