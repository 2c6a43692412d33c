/**
 * The request body parser of media sends, used instead of the app's 1 MiB JSON parser (and only after
 * authentication): JSON up to the size of the kind's largest media as base64, or multipart/form-data
 * with one `file` part (streamed by formidable into DATA_DIR, capped at the kind's limit) and the other
 * fields as text parts. Uploads that the handler did not adopt are removed when the request ends.
 */
import { rm } from 'node:fs/promises';
import type { Context, Middleware, Next } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { TSchema } from 'typebox';
import { Problem, invalidRequest } from '../http/problem.js';
import type { MediaKind } from './media-kinds.js';
import type { MediaInput } from './media-intake.js';
import { mediaTooLarge } from './media-intake.js';
import { base64LengthOf } from './media-limits.js';

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
}

interface UploadedFile {
  filepath: string;
  size: number;
  originalFilename?: string | null;
  hash?: string | null;
}

type FormidableFailure = Error & { code?: number; httpCode?: number };

export function mediaBodyParser(options: MediaBodyParserOptions): Middleware {
  const multipartMax = options.limit + FIELDS_ALLOWANCE;
  const types = propertyTypes(options.schema);
  return async (ctx: Context, next: Next) => {
    const uploads: string[] = [];
    const parse = koaBody({
      json: true,
      jsonStrict: true,
      jsonLimit: base64LengthOf(options.limit) + FIELDS_ALLOWANCE,
      urlencoded: false,
      text: false,
      multipart: true,
      parsedMethods: [HttpMethodEnum.POST],
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
      },
    });
    try {
      if (ctx.request.is('multipart') && ctx.request.length > multipartMax) throw mediaTooLarge(options.kind, options.limit);
      try {
        await parse(ctx, async () => undefined);
      } catch (error) {
        throw asProblem(error as FormidableFailure, options);
      }
      if (ctx.request.is('multipart')) (ctx.request as { body?: unknown }).body = multipartFields(ctx.request.body, types);
      await next();
    } finally {
      await Promise.all(uploads.map((path) => rm(path, { force: true })));
    }
  };
}

/** The `file` part of a multipart request, if it had one. */
export function uploadedMedia(ctx: Context): Extract<MediaInput, { from: 'upload' }> | undefined {
  const files = (ctx.request as { files?: Record<string, UploadedFile | UploadedFile[]> }).files;
  if (!files) return undefined;
  const names = Object.keys(files);
  const other = names.find((name) => name !== 'file');
  if (other !== undefined) throw invalidRequest(`multipart part "${other}" is not known; the media goes in the part named "file"`, [{ path: `/${other}`, message: 'is not a known part' }]);
  const file = files.file;
  if (file === undefined) return undefined;
  if (Array.isArray(file)) throw invalidRequest('only one file part is allowed', [{ path: '/file', message: 'must be one part' }]);
  return {
    from: 'upload',
    path: file.filepath,
    size: file.size,
    sha256: file.hash ?? '',
    ...(file.originalFilename ? { filename: file.originalFilename } : {}),
  };
}

/** Text parts → the body object: one value per name, booleans and numbers as the schema declares them. */
function multipartFields(fields: unknown, types: Map<string, string>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries((fields ?? {}) as Record<string, unknown>)) {
    if (FORBIDDEN_KEYS.has(name)) throw invalidRequest(`body/${name} is a forbidden key`, [{ path: `/${name}`, message: 'is a forbidden key' }]);
    if (Array.isArray(value)) throw invalidRequest(`body/${name} is given more than once`, [{ path: `/${name}`, message: 'is given more than once' }]);
    body[name] = coerce(String(value), types.get(name));
  }
  return body;
}

function coerce(text: string, type: string | undefined): unknown {
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  if ((type === 'number' || type === 'integer') && /^-?\d{1,15}(\.\d{1,15})?$/.test(text)) return Number(text);
  return text;
}

function propertyTypes(schema: TSchema): Map<string, string> {
  const properties = (schema as { properties?: Record<string, { type?: string }> }).properties ?? {};
  return new Map(Object.entries(properties).flatMap(([name, p]) => (typeof p.type === 'string' ? [[name, p.type] as [string, string]] : [])));
}

function asProblem(error: FormidableFailure, options: MediaBodyParserOptions): unknown {
  if (error instanceof Problem || typeof error.code !== 'number') return error; // JSON parser errors: the app's problem middleware knows them
  switch (error.code) {
    case 1009: // biggerThanTotalMaxFileSize
    case 1016: // biggerThanMaxFileSize
      return mediaTooLarge(options.kind, options.limit);
    case 1006: // maxFieldsSizeExceeded
      return new Problem(413, 'payload_too_large', `the text fields of the request exceed ${FIELDS_ALLOWANCE} bytes`);
    case 1015: // maxFilesExceeded
      return invalidRequest('only one file part is allowed', [{ path: '/file', message: 'must be one part' }]);
    case 1007: // maxFieldsExceeded
      return invalidRequest(`a multipart request takes at most ${MAX_FIELDS} fields`, [{ path: '/', message: `has more than ${MAX_FIELDS} fields` }]);
    default:
      return invalidRequest(`the multipart body cannot be read: ${error.message}`, [{ path: '/', message: 'is not valid multipart/form-data' }]);
  }
}
