/**
 * The request body parser of media sends, used instead of the app's 1 MiB JSON parser (and only after
 * authentication): JSON whose `base64` is decoded to a file as it streams in (json-media-body.ts), or
 * multipart/form-data with one `file` part (formidable, into DATA_DIR). Every limit applies to the bytes as
 * decoded from their Content-Encoding; large bodies are read a few at a time (BodyGate); files the handler
 * did not adopt are removed when the request ends.
 */
import { randomUUID } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { PassThrough, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Context, Middleware, Next } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { TSchema } from 'typebox';
import { isDecodingError, undecodableBody } from '../middleware/problem-responses.js';
import { Problem, invalidRequest, unsupportedMediaType } from '../problem.js';
import type { MediaKind } from '../../media/media-kinds.js';
import { type BodyGate, SMALL_BODY_BYTES, watchBody } from './body-gate.js';
import { type Base64Path, type SpooledBase64, readJsonMediaBody } from './json-media-body.js';
import type { MediaInput } from '../../media/media-intake.js';
import { mediaTooLarge, uploadFilename } from '../../media/media-intake.js';
import { base64LengthOf } from '../../media/media-limits.js';

/** Room for the fields around the media (to, caption, filename…) in a JSON or multipart body. */
const FIELDS_ALLOWANCE = 256 * 1024;
const MAX_FIELDS = 16;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export interface MediaBodyParserOptions {
  kind: MediaKind;
  /** Largest media of this kind, in bytes. */
  limit: number;
  uploadDir: string;
  /** The route's body schema: multipart text fields are converted to the types it declares. */
  schema: TSchema;
  /** Shared by every media route: how many large bodies are read at once. */
  gate: BodyGate;
  /** Where a JSON body holds its base64 media (default: the top-level `base64`). */
  base64Path?: Base64Path;
  /** false: the route has no Idempotency-Key fingerprint, so the base64 text is not hashed (`textDigest` is ''). */
  textDigest?: boolean;
}

const spooledBase64 = new WeakMap<Context, SpooledBase64>();

interface UploadedFile {
  filepath: string;
  size: number;
  originalFilename?: string | null;
  hash?: string | null;
}

type FormidableFailure = Error & { code?: number; httpCode?: number };

export function mediaBodyParser(options: MediaBodyParserOptions): Middleware {
  const multipartMax = options.limit + FIELDS_ALLOWANCE;
  const jsonLimits = {
    media: options.limit,
    fields: FIELDS_ALLOWANCE,
    total: base64LengthOf(options.limit) + FIELDS_ALLOWANCE,
  };
  const types = propertyTypes(options.schema);
  const tooLarge = () => mediaTooLarge(options.kind, options.limit);
  const parseMultipart = (uploads: string[], parts: { files: number }) =>
    koaBody({
      json: false,
      urlencoded: false,
      text: false,
      multipart: true,
      parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT],
      formidable: {
        uploadDir: options.uploadDir,
        maxFiles: 1,
        maxFileSize: options.limit,
        maxTotalFileSize: options.limit,
        maxFields: MAX_FIELDS,
        maxFieldsSize: FIELDS_ALLOWANCE,
        allowEmptyFiles: true,
        minFileSize: 0,
        hashAlgorithm: 'sha256',
        onFileBegin: (_name: string, file: { filepath: string }) => void uploads.push(file.filepath),
        // A file part past the first is skipped before formidable creates its file (its maxFiles refusal came
        // after that file was opened, and left it on disk); the request is refused once the body is read.
        filter: () => ++parts.files === 1,
      },
    });
  return async (ctx: Context, next: Next) => {
    const uploads: string[] = [];
    // A gated read cut short (client gone, stalled) may still be writing its file: the files go once it has stopped.
    let cutShort: Promise<unknown> | undefined;
    try {
      const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
      const small =
        encoding === 'identity' && ctx.get('transfer-encoding') === '' && ctx.request.length <= SMALL_BODY_BYTES;
      const read = async () => {
        if (ctx.request.is('multipart')) {
          // formidable reads the raw bytes: an encoded multipart body cannot be parsed, so it is refused.
          if (encoding !== 'identity') throw unsupportedMediaType('a multipart body cannot have a Content-Encoding');
          if (ctx.request.length > multipartMax) throw tooLarge();
          const parts = { files: 0 };
          try {
            await parseMultipart(uploads, parts)(ctx, async () => undefined);
          } catch (error) {
            throw asProblem(error as FormidableFailure, options);
          }
          if (parts.files > 1) throw onlyOneFile();
          (ctx.request as { body?: unknown }).body = multipartFields(ctx.request.body, types);
        } else if (ctx.request.is('json')) {
          const charset = ctx.request.charset;
          if (charset && charset !== 'utf-8' && charset !== 'utf8')
            throw unsupportedMediaType(`charset ${charset} is not supported; send utf-8`);
          if (ctx.request.length > jsonLimits.total) throw tooLarge();
          const spoolPath = join(options.uploadDir, `base64-${randomUUID()}`);
          // Removed afterwards only once created: a JSON body without media (most of them) costs no failed unlink.
          const onSpoolBegin = () => void uploads.push(spoolPath);
          const { body, spooled } = await readDecoded(ctx.req, encoding, (source) =>
            readJsonMediaBody(source, jsonLimits, spoolPath, tooLarge, options.base64Path, {
              textDigest: options.textDigest !== false,
              onSpoolBegin,
            }),
          );
          (ctx.request as { body?: unknown }).body = body;
          if (spooled) spooledBase64.set(ctx, spooled);
        }
        // Any other type is left unread: validation answers 415.
      };
      if (small) await read();
      else {
        const { idleTimeoutMs: idleMs, rate, clock } = options.gate;
        const watch = watchBody(ctx.req, ctx.res, { idleMs, rate, clock });
        let reading: Promise<void> | undefined;
        try {
          await options.gate.run(
            String((ctx.params as Record<string, string> | undefined)?.deviceId ?? ''),
            () => {
              // Its turn came after the client had gone: nothing to read.
              watch.signal.throwIfAborted();
              watch.reading();
              reading = read();
              return reading;
            },
            watch.signal,
          );
        } catch (error) {
          if (watch.signal.aborted && reading) cutShort = reading;
          throw error;
        } finally {
          watch.dispose();
        }
      }
      await next();
    } finally {
      // unlink, not rm: one system call (rm looks first); a file the handler moved away is simply not there.
      const removeUploads = () =>
        Promise.all(
          uploads.map((path) =>
            unlink(path).catch((error: NodeJS.ErrnoException) => {
              if (error.code !== 'ENOENT') throw error;
            }),
          ),
        );
      // The connection closes after the answer, which ends that read; the answer does not wait for it.
      if (cutShort) void cutShort.then(removeUploads, removeUploads).catch(() => undefined);
      else await removeUploads();
    }
  };
}

/**
 * The request body decoded from its Content-Encoding (gzip, deflate, br or none), as a stream that the
 * reader consumes at its own pace. If the reader stops early (a limit), the rest of the raw body is
 * discarded as it arrives (never kept), so that the answer reaches the client.
 */
async function readDecoded<T>(
  request: IncomingMessage,
  encoding: string,
  reader: (source: AsyncIterable<Buffer>) => Promise<T>,
): Promise<T> {
  const decoder = decoderFor(encoding);
  const aborted = () =>
    decoder.destroy(Object.assign(new Error('the request was aborted'), { type: 'request.aborted' }));
  request.once('aborted', aborted);
  request.once('error', aborted);
  request.pipe(decoder);
  try {
    return await reader(decoder);
  } catch (error) {
    if (isDecodingError(error as { code?: unknown })) throw undecodableBody();
    if ((error as { type?: string }).type === 'request.aborted')
      throw new Problem(400, 'invalid_request', 'the request was aborted', { errors: [] });
    throw error;
  } finally {
    request.off('aborted', aborted);
    request.off('error', aborted);
    request.unpipe(decoder);
    decoder.destroy();
    // Stopped early (a limit): the rest is read and thrown away, so the connection stays usable for the answer.
    if (!request.complete) request.resume();
  }
}

function decoderFor(encoding: string): Transform {
  switch (encoding) {
    case 'identity':
      return new PassThrough();
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      throw unsupportedMediaType(`Content-Encoding ${encoding} is not supported; use gzip, deflate, br or none`);
  }
}

/** The media read into a file: a multipart `file` part, or the `base64` of a JSON body. */
export function uploadedMedia(ctx: Context): Extract<MediaInput, { from: 'upload' | 'spooled' }> | undefined {
  const spooled = spooledBase64.get(ctx);
  if (spooled) return { from: 'spooled', ...spooled };
  const files = (ctx.request as { files?: Record<string, UploadedFile | UploadedFile[]> }).files;
  if (!files) return undefined;
  const names = Object.keys(files);
  const other = names.find((name) => name !== 'file');
  if (other !== undefined)
    throw invalidRequest(`multipart part "${other}" is not known; the media goes in the part named "file"`, [
      { path: `/${other}`, message: 'is not a known part' },
    ]);
  const file = files.file;
  if (file === undefined) return undefined;
  if (Array.isArray(file))
    throw invalidRequest('only one file part is allowed', [{ path: '/file', message: 'must be one part' }]);
  return {
    from: 'upload',
    path: file.filepath,
    size: file.size,
    sha256: file.hash ?? '',
    ...(file.originalFilename ? { filename: uploadFilename(file.originalFilename) } : {}),
  };
}

/**
 * Text parts → the body object: one value per name, booleans and numbers as the schema declares them. A field
 * the schema declares as a list (`mentions`) may be given as repeated parts, as one part of comma-separated
 * items, or as one part holding a JSON array; the schema then checks the items.
 */
function multipartFields(fields: unknown, types: Map<string, string>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries((fields ?? {}) as Record<string, unknown>)) {
    if (FORBIDDEN_KEYS.has(name))
      throw invalidRequest(`body/${name} is a forbidden key`, [{ path: `/${name}`, message: 'is a forbidden key' }]);
    if (types.get(name) === 'array') {
      // A list that may also be one word instead (`mentions: "all"`): that word stays a string.
      if (!Array.isArray(value) && LIST_WORDS.has(String(value).trim())) body[name] = String(value).trim();
      else body[name] = (Array.isArray(value) ? value : [value]).flatMap((part) => listItems(String(part)));
      continue;
    }
    if (Array.isArray(value))
      throw invalidRequest(`body/${name} is given more than once`, [
        { path: `/${name}`, message: 'is given more than once' },
      ]);
    body[name] = coerce(String(value), types.get(name));
  }
  return body;
}

/** The items of one list part: a JSON array as it is, else the comma-separated words. */
function listItems(text: string): unknown[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (Array.isArray(parsed)) return parsed;
    } catch {
      // not JSON: taken as words, which the schema will refuse with a clear message
    }
  }
  return trimmed
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

function coerce(text: string, type: string | undefined): unknown {
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  if ((type === 'number' || type === 'integer') && /^-?\d{1,15}(\.\d{1,15})?$/.test(text)) return Number(text);
  return text;
}

/** Words a list field may be instead of a list (`mentions: "all"`). */
const LIST_WORDS: ReadonlySet<string> = new Set(['all']);

function propertyTypes(schema: TSchema): Map<string, string> {
  type Property = { type?: string; anyOf?: Property[] };
  const properties = (schema as { properties?: Record<string, Property> }).properties ?? {};
  return new Map(
    Object.entries(properties).flatMap(([name, p]) => {
      if (typeof p.type === 'string') return [[name, p.type] as [string, string]];
      // A list or a word (`mentions`): read as a list.
      if (p.anyOf?.some((q) => q.type === 'array')) return [[name, 'array'] as [string, string]];
      return [];
    }),
  );
}

const onlyOneFile = () =>
  invalidRequest('only one file part is allowed', [{ path: '/file', message: 'must be one part' }]);

function asProblem(error: FormidableFailure, options: MediaBodyParserOptions): unknown {
  if (error instanceof Problem || typeof error.code !== 'number') return error; // JSON parser errors: the app's problem middleware knows them
  switch (error.code) {
    case 1009: // biggerThanTotalMaxFileSize
    case 1016: // biggerThanMaxFileSize
      return mediaTooLarge(options.kind, options.limit);
    case 1006: // maxFieldsSizeExceeded
      return new Problem(413, 'payload_too_large', `the text fields of the request exceed ${FIELDS_ALLOWANCE} bytes`);
    case 1015: // maxFilesExceeded
      return onlyOneFile();
    case 1007: // maxFieldsExceeded
      return invalidRequest(`a multipart request takes at most ${MAX_FIELDS} fields`, [
        { path: '/', message: `has more than ${MAX_FIELDS} fields` },
      ]);
    default:
      return invalidRequest(`the multipart body cannot be read: ${error.message}`, [
        { path: '/', message: 'is not valid multipart/form-data' },
      ]);
  }
}
