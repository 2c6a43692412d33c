import { invalidRequest } from '../problem.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { InboundAcceptedSchema, InboundBody } from '../schemas/sandbox.js';
import { randomBytes } from 'node:crypto';
import type { Static } from 'typebox';
import type { InboundMessage, QuotedMessage } from '../../engines/engine.js';
import { newSandboxMessageId } from '../../engines/sandbox/sandbox-network.js';
import { mediaBodyParser, uploadedMedia } from '../body/media-body-parser.js';
import { SandboxMedia } from '../../engines/sandbox/sandbox-media.js';
import { outcomeUnknown } from '../../cluster/owner-calls.js';
import { type SandboxCalls, type SandboxRouteDeps, NOT_FOUND, SANDBOX_NOT_ONLINE, tag } from './sandbox-calls.js';

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

const required = (field: string, type: string) =>
  invalidRequest(`body/${field} is required for type ${type}`, [
    { path: `/${field}`, message: `is required for type ${type}` },
  ]);

export function sandboxInboundRoutes(deps: SandboxRouteDeps, net: SandboxCalls): RouteSpec[] {
  const { seen, inboundMedia } = deps;
  const { requireSandboxDevice, notOnline, receive, act } = net;
  return [
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
  ];
}
