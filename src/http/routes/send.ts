/**
 * POST /devices/:deviceId/send/<kind> and DELETE /devices/:deviceId/send/:waMessageId (docs/api-guide.md, "Sending and the outbox").
 * Every send is queued in the device's outbox and answered 202 at once, whatever the session state.
 */
import type { Context } from 'koa';
import type { TSchema } from 'typebox';
import type { MediaSettings } from '../../config.js';
import {
  IDEMPOTENCY_HEADER,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  parseIdempotencyKey,
} from '../../outbox/commands/idempotency-keys.js';
import type { BodyGate } from '../body/body-gate.js';
import { mediaBodyParser, uploadedMedia } from '../body/media-body-parser.js';
import type { MediaInput } from '../../media/media-intake.js';
import { mediaLimitOf } from '../../media/media-limits.js';
import type { MediaStore } from '../../media/media-store.js';
import { isSingleEmoji } from '../../outbox/commands/emoji.js';
import type { MediaKind, QueuedAnswer } from '../../outbox/stream/outbox-events.js';
import type { SendCommands } from '../../outbox/commands/send-commands.js';
import { invalidRequest } from '../problem.js';
import {
  type HandlerInput,
  type HandlerResult,
  type RequestDevice,
  type ResponseSpec,
  type RouteSpec,
  defineRoute,
} from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import {
  AudioBody,
  ContactBody,
  DeleteMessageSchema,
  EditBody,
  EditSchema,
  FileBody,
  ForwardBody,
  PollBody,
  StickerBody,
  ImageOrVideoBody,
  LinkBody,
  LocationBody,
  IdempotencyHeaders,
  MessageParams,
  QueuedSchema,
  ReactionBody,
  TextBody,
} from '../schemas/send.js';

export interface SendRouteDeps {
  sends: SendCommands;
  /** How many large media bodies are read at once. */
  bodyGate: BodyGate;
  /** Whether a device exists (the admin key reaches any id). */
  media: MediaStore;
  mediaSettings: MediaSettings;
}

const tag = 'Sending';

const IDEMPOTENCY_NOTE =
  `An \`Idempotency-Key\` header (1..${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters) makes a retried request return the first answer ` +
  'instead of queuing again, for 24 h and across restarts; the same key with a different request is `422 idempotency_key_reused` (the same fields in another JSON order are the same request).';

const QUEUED: Record<number, ResponseSpec> = {
  202: { description: 'Queued in the outbox; sent once the session is online.', schema: QueuedSchema },
  404: {
    description:
      'No such device (admin key only), or `replyTo` names a message not seen in this chat (`message_not_found`).',
  },
  409: {
    description:
      'Pacing: the number never wrote to this account and got its `unansweredLimit` of messages (`recipient_unresponsive`); nothing was queued.',
  },
  422: { description: 'The Idempotency-Key was used with another request (`idempotency_key_reused`).' },
};

const CONTEXT_NOTE =
  'Every send also takes `replyTo` (the waMessageId of a message of the same chat that the gateway has seen: the new one quotes it), `mentions` (up to 256 numbers, written `@<number>` in the text; in a multipart body as repeated parts, one comma-separated part or a JSON array) ' +
  'and `expiresAt` (not sent by then, the message is `expired` instead of going out late; default: OUTBOX_MESSAGE_TTL, if set). ' +
  'The `202` carries `sessionState`: a message queued while the session is not `online` waits until it is. ' +
  '`to` is a number, a group id (`…@g.us`) or an `@lid` id.';

/** A sensible request per media kind (the schema cannot require one of `url` and `base64`). */
const MEDIA_EXAMPLES: Record<MediaKind, Record<string, unknown>> = {
  image: { to: '4915112345678', url: 'https://example.com/media/parcel.jpg', caption: 'Your parcel' },
  video: { to: '4915112345678', url: 'https://example.com/media/unboxing.mp4', caption: 'How to unpack it' },
  audio: { to: '4915112345678', url: 'https://example.com/media/greeting.ogg', ptt: true },
  file: {
    to: '4915112345678',
    url: 'https://example.com/media/invoice-4711.pdf',
    filename: 'invoice-4711.pdf',
    caption: 'Your invoice',
  },
  sticker: { to: '4915112345678', url: 'https://example.com/media/thanks.webp' },
};

/** The quote, mentions and expiry of a send body. */
const contextOf = (body: { replyTo?: string; mentions?: string[] | 'all'; expiresAt?: string }) => ({
  ...(body.replyTo === undefined ? {} : { replyTo: body.replyTo }),
  ...(body.mentions === undefined ? {} : { mentions: body.mentions }),
  ...(body.expiresAt === undefined ? {} : { expiresAt: body.expiresAt }),
});

/** The 202 of a send: the queued message and the session state now, so that a caller sees at once when it cannot go out. */
const queued = (device: RequestDevice, answer: QueuedAnswer) => ({
  status: 202,
  body: { ...answer, sessionState: device.sessionState() },
});

/** The request's Idempotency-Key (declared by `IdempotencyHeaders`), checked; undefined when none was sent. */
export const idempotencyKeyOf = (ctx: Context) => parseIdempotencyKey(ctx.get(IDEMPOTENCY_HEADER) || undefined);
const keyOf = idempotencyKeyOf;

export function sendRoutes(deps: SendRouteDeps): RouteSpec[] {
  const { sends } = deps;
  const description = (what: string) => `${what}\n\n${CONTEXT_NOTE}\n\n${IDEMPOTENCY_NOTE}`;

  const media = (kind: MediaKind, schema: TSchema, summary: string, what: string) =>
    mediaSendRoute(deps, {
      kind,
      path: `/devices/:deviceId/send/${kind}`,
      operationId: `send${kind[0].toUpperCase()}${kind.slice(1)}`,
      tag,
      summary,
      description: (limit) =>
        description(
          `${what} Exactly one of \`url\` (fetched when the message is sent), \`base64\`, or a multipart/form-data \`file\` part (the other fields as parts). ` +
            `At most ${limit} bytes (\`413\` over). The media type is detected from the bytes when \`mimetype\` is left out.`,
        ),
      schema,
      examples: { request: MEDIA_EXAMPLES[kind] },
      responses: (limit) => ({
        ...QUEUED,
        413: { description: `The media is larger than ${limit} bytes (\`payload_too_large\`).` },
        415: {
          description:
            "The media's type does not fit the message kind or cannot be recognised (`unsupported_media_type`), or the body is neither JSON nor multipart.",
        },
      }),
      async handle({ params, body, ctx, device }, upload) {
        const fields = body as {
          to: string;
          url?: string;
          base64?: string;
          mimetype?: string;
          caption?: string;
          filename?: string;
          ptt?: boolean;
          replyTo?: string;
          mentions?: string[] | 'all';
          expiresAt?: string;
        };
        const input = mediaInputOf(fields, upload);
        if (kind === 'file' && fields.filename === undefined && !(input.from === 'upload' && input.filename)) {
          throw invalidRequest('body/filename is required (or a multipart file part with a name)', [
            { path: '/filename', message: 'is required (or a multipart file part with a name)' },
          ]);
        }
        const { to, mimetype, caption, filename, ptt } = fields;
        const answer = await sends.send(
          params.deviceId,
          { kind, to, media: input, mimetype, caption, filename, ptt, ...contextOf(fields) },
          keyOf(ctx),
        );
        return queued(device, answer);
      },
    });

  return [
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/send/text',
      operationId: 'sendText',
      tag,
      summary: 'Send a text message',
      description: description('Queues a text message (1 to 65536 characters).'),
      access: 'device',
      scope: 'send',
      reads: 'as-they-are',
      params: DeviceParams,
      headers: IdempotencyHeaders,
      body: TextBody,
      responses: QUEUED,
      async handler({ params, body, ctx, device }) {
        return queued(
          device,
          await sends.send(
            params.deviceId,
            { kind: 'text', to: body.to, text: body.text, ...contextOf(body) },
            keyOf(ctx),
          ),
        );
      },
    }),
    media('image', ImageOrVideoBody, 'Send an image', 'Queues an image with an optional caption.'),
    media('video', ImageOrVideoBody, 'Send a video', 'Queues a video with an optional caption.'),
    media(
      'audio',
      AudioBody,
      'Send audio or a voice note',
      'Queues an audio message; `ptt: true` sends it as a voice note.',
    ),
    media('file', FileBody, 'Send a file', 'Queues a document with its file name and an optional caption.'),
    media(
      'sticker',
      StickerBody,
      'Send a sticker',
      'Queues a sticker: WebP (static or animated), at most 1 MiB; any other type is `415`.',
    ),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/send/contact',
      operationId: 'sendContact',
      tag,
      summary: 'Send contact cards',
      description: description(
        'Queues 1 to 10 contact cards, sent as vCards. Every field is escaped: a newline in a value cannot add a line to the card.',
      ),
      access: 'device',
      scope: 'send',
      reads: 'as-they-are',
      params: DeviceParams,
      headers: IdempotencyHeaders,
      body: ContactBody,
      responses: QUEUED,
      async handler({ params, body, ctx, device }) {
        return queued(device, await sends.send(params.deviceId, { kind: 'contact', ...body }, keyOf(ctx)));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/send/poll',
      operationId: 'sendPoll',
      tag,
      summary: 'Send a poll',
      description: description(
        'Queues a poll: `question` (1 to 255 characters), `options` (2 to 12 distinct, 1 to 100 characters each), `multipleAnswers` (default false). ' +
          'Its votes arrive as `poll.vote` events, decrypted.',
      ),
      access: 'device',
      scope: 'send',
      reads: 'as-they-are',
      params: DeviceParams,
      headers: IdempotencyHeaders,
      body: PollBody,
      responses: QUEUED,
      async handler({ params, body, ctx, device }) {
        const trimmed = body.options.map((o) => o.trim());
        if (new Set(trimmed).size !== trimmed.length) {
          throw invalidRequest('body/options must be distinct', [
            { path: '/options', message: 'must not contain the same option twice' },
          ]);
        }
        return queued(device, await sends.send(params.deviceId, { kind: 'poll', ...body }, keyOf(ctx)));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/send/forward',
      operationId: 'sendForward',
      tag,
      summary: 'Forward a message',
      description: description(
        'Forwards `messageId`, a message the gateway has seen (sent or received) with text or media, as it is. Unknown: `404 message_not_found`; ' +
          'its media no longer kept: `410 media_expired`; a kind that cannot be forwarded (poll, reaction): `409 not_forwardable`.',
      ),
      access: 'device',
      scope: 'send',
      reads: 'as-they-are',
      params: DeviceParams,
      headers: IdempotencyHeaders,
      body: ForwardBody,
      responses: {
        ...QUEUED,
        404: {
          description: 'No such device, or no message `messageId` (or `replyTo`) was seen (`message_not_found`).',
        },
        409: { description: 'The message cannot be forwarded (`not_forwardable`).' },
        410: { description: 'Its media is no longer kept (`media_expired`).' },
      },
      async handler({ params, body, ctx, device }) {
        return queued(device, await sends.send(params.deviceId, { kind: 'forward', ...body }, keyOf(ctx)));
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/devices/:deviceId/send/:waMessageId',
      operationId: 'editMessage',
      tag,
      summary: 'Edit a message',
      description:
        'Replaces the text (or caption) of a message this device sent. Still in the outbox: it goes out with the new text (`200 edited`). ' +
        "Sent less than 15 minutes ago (WhatsApp's limit): the edit is queued in the outbox (`202 editing`) and reaches the recipient as an edit. " +
        'Otherwise `409 not_editable` (being sent right now, too old, not sent by this device, or without text); unknown `404 message_not_found`.',
      access: 'device',
      scope: 'send',
      params: MessageParams,
      body: EditBody,
      responses: {
        200: { description: 'Edited in the outbox, before it was sent.', schema: EditSchema },
        202: { description: 'The edit is queued.', schema: EditSchema },
        404: { description: 'No such device, or no message with this id (`message_not_found`).' },
        409: { description: 'The message cannot be edited (`not_editable`).' },
        503: {
          description:
            'The read models have not caught up with the log, so the message could not be looked up (`busy`, reason `read_models_lagging`): nothing was changed; try again after `Retry-After`.',
        },
      },
      async handler({ params, body }) {
        const outcome = await sends.edit(params.deviceId, params.waMessageId, body.text);
        return { status: outcome.status === 'editing' ? 202 : 200, body: outcome };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/send/location',
      operationId: 'sendLocation',
      tag,
      summary: 'Send a location',
      description: description('Queues a location pin, with an optional name and address.'),
      access: 'device',
      scope: 'send',
      reads: 'as-they-are',
      params: DeviceParams,
      headers: IdempotencyHeaders,
      body: LocationBody,
      responses: QUEUED,
      async handler({ params, body, ctx, device }) {
        return queued(device, await sends.send(params.deviceId, { kind: 'location', ...body }, keyOf(ctx)));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/send/link',
      operationId: 'sendLink',
      tag,
      summary: 'Send a link',
      description: description(
        "Queues a text with a link (the url is appended when the text lacks it). With `preview: true` the page's Open Graph data is fetched " +
          'when the message is sent, through the outbound network guard, and shown as a preview; on any failure the link goes without one.',
      ),
      access: 'device',
      scope: 'send',
      reads: 'as-they-are',
      params: DeviceParams,
      headers: IdempotencyHeaders,
      body: LinkBody,
      responses: QUEUED,
      async handler({ params, body, ctx, device }) {
        // The schema's uri format is a pattern: a port over 65535 or a broken host passes it, not the URL parser.
        if (!URL.canParse(body.url))
          throw invalidRequest('body/url is not a valid URL', [{ path: '/url', message: 'is not a valid URL' }]);
        return queued(device, await sends.send(params.deviceId, { kind: 'link', ...body }, keyOf(ctx)));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/send/reaction',
      operationId: 'sendReaction',
      tag,
      summary: 'React to a message',
      description: description(
        'Reacts to the message `messageId` (a waMessageId, sent or received) in the chat with `to`; `emoji: ""` removes the reaction.',
      ),
      access: 'device',
      scope: 'send',
      reads: 'as-they-are',
      params: DeviceParams,
      headers: IdempotencyHeaders,
      body: ReactionBody,
      responses: QUEUED,
      async handler({ params, body, ctx, device }) {
        if (body.emoji !== '' && !isSingleEmoji(body.emoji)) {
          throw invalidRequest('body/emoji must be one emoji, or "" to remove the reaction', [
            { path: '/emoji', message: 'must be one emoji or ""' },
          ]);
        }
        return queued(device, await sends.send(params.deviceId, { kind: 'reaction', ...body }, keyOf(ctx)));
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/devices/:deviceId/send/:waMessageId',
      operationId: 'deleteMessage',
      tag,
      summary: 'Cancel or delete a message',
      description:
        'A message still in the outbox is removed and never sent (`200 cancelled`); one being sent right now cannot be (`409 message_sending`). ' +
        'A sent message is revoked for everyone once the session is online (`202 deleting`, later the status `deleted`). A message that failed is `409 message_failed`.',
      access: 'device',
      scope: 'send',
      params: MessageParams,
      responses: {
        200: { description: 'Cancelled (or already cancelled or deleted).', schema: DeleteMessageSchema },
        202: { description: 'Being revoked for everyone.', schema: DeleteMessageSchema },
        404: { description: 'No message with this id was sent from this device (or no such device).' },
        409: { description: 'Being sent right now (`message_sending`), or it failed (`message_failed`).' },
        503: {
          description:
            'The read models have not caught up with the log, so the message could not be looked up (`busy`, reason `read_models_lagging`): nothing was changed; try again after `Retry-After`.',
        },
      },
      async handler({ params }) {
        const outcome = await sends.delete(params.deviceId, params.waMessageId);
        return { status: outcome.status === 'deleting' ? 202 : 200, body: outcome };
      },
    }),
  ];
}

/** Exactly one source of media. */
export function mediaInputOf(fields: { url?: string; base64?: string }, upload: MediaInput | undefined): MediaInput {
  const given = [
    upload && (upload.from === 'spooled' ? 'base64' : 'a file part'),
    fields.url !== undefined && 'url',
    fields.base64 !== undefined && 'base64',
  ].filter(Boolean);
  if (given.length !== 1) {
    const message =
      given.length === 0
        ? 'must have one of url, base64 or a file part'
        : `must have only one of url, base64 or a file part, got ${given.join(' and ')}`;
    throw invalidRequest(`body ${message}`, [{ path: '/', message }]);
  }
  if (upload) return upload;
  return fields.url !== undefined ? { from: 'url', url: fields.url } : { from: 'base64', text: fields.base64! };
}

/**
 * A media send's route: the body is JSON (`url` or `base64`) or multipart/form-data with a `file` part, parsed after
 * authentication by the media body parser (capped at the kind's limit), with the Idempotency-Key header. The sends
 * (`/send/<kind>`) and the statuses (`/status/<kind>`) are made by it; `handle` gets the uploaded file, if any.
 */
export function mediaSendRoute<B extends TSchema>(
  deps: Pick<SendRouteDeps, 'media' | 'mediaSettings' | 'bodyGate'>,
  spec: {
    kind: MediaKind;
    path: string;
    operationId: string;
    tag: string;
    summary: string;
    description: (limit: number) => string;
    schema: B;
    examples?: RouteSpec['examples'];
    responses: (limit: number) => Record<number, ResponseSpec>;
    handle(
      input: HandlerInput<typeof DeviceParams, undefined, B>,
      upload: MediaInput | undefined,
    ): Promise<HandlerResult>;
  },
): RouteSpec {
  const { kind, schema } = spec;
  const limit = mediaLimitOf(kind, deps.mediaSettings);
  return defineRoute({
    method: 'post',
    path: spec.path,
    operationId: spec.operationId,
    tag: spec.tag,
    summary: spec.summary,
    description: spec.description(limit),
    access: 'device',
    scope: 'send',
    reads: 'as-they-are',
    params: DeviceParams,
    headers: IdempotencyHeaders,
    body: schema,
    bodyParser: {
      parse: mediaBodyParser({ kind, limit, uploadDir: deps.media.incomingDir, schema, gate: deps.bodyGate }),
      multipart: true,
    },
    ...(spec.examples ? { examples: spec.examples } : {}),
    responses: spec.responses(limit),
    handler: (input) => spec.handle(input, uploadedMedia(input.ctx)),
  });
}
