/**
 * Turns the media of a send request (a multipart upload, base64 text or a URL) into the MediaSource the
 * outbox records: bytes are checked against the kind's limit and type and kept on disk; a URL is only
 * checked here and fetched when the message is sent.
 */
import type { MediaSettings } from '../config.js';
import { DomainError, invalidField } from '../errors/domain-error.js';
import type { OutboundGuard } from '../net/outbound-guard.js';
import type { MediaKind, MediaSource } from './media-kinds.js';
import { mediaLimitOf } from './media-limits.js';
import type { MediaStore } from './media-store.js';
import { MediaTypeError, isMimetype, resolveMimetype } from './media-type.js';

export type MediaInput =
  /** `sha256`: hex digest of the bytes (the request's fingerprint uses it). */
  | { from: 'upload'; path: string; size: number; sha256: string; filename?: string }
  | { from: 'base64'; text: string }
  /** base64 of a JSON body, decoded to a file while it was read; `textDigest` stands for the text in fingerprints. */
  | { from: 'spooled'; path: string; size: number; textDigest: string; declaredType?: string }
  | { from: 'url'; url: string };

export interface MediaFields {
  mimetype?: string;
  filename?: string;
}

const DATA_URL = /^data:([^;,]+)?(?:;[^;,=]+=[^;,]*)*;base64,/i;

/** The longest file name a send takes (as the `filename` field's schema says). */
const FILENAME_MAX_LENGTH = 255;
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * A multipart file part's file name as a plain name, held to the `filename` field's rule (1..255 characters)
 * and without control characters. It is only ever a display name, but it is never kept as a path: only its
 * last segment counts (a browser sends no more; formidable already drops what precedes a backslash).
 */
export function uploadFilename(given: string): string {
  const name = given.slice(Math.max(given.lastIndexOf('/'), given.lastIndexOf('\\')) + 1);
  if (name === '' || name === '.' || name === '..')
    throw invalidField('/file', 'has a file name that is a path, not a name');
  if (name.length > FILENAME_MAX_LENGTH)
    throw invalidField('/file', `has a file name longer than ${FILENAME_MAX_LENGTH} characters`);
  if (CONTROL_CHARACTERS.test(name)) throw invalidField('/file', 'has a file name with control characters');
  return name;
}

export const mediaTooLarge = (kind: MediaKind, limit: number) =>
  new DomainError(
    'payload_too_large',
    `the ${kind === 'file' ? 'file' : kind} is larger than the limit of ${limit} bytes`,
  );

export class MediaIntake {
  constructor(
    private readonly store: MediaStore,
    private readonly settings: MediaSettings,
    private readonly guard: OutboundGuard,
  ) {}

  limitOf(kind: MediaKind): number {
    return mediaLimitOf(kind, this.settings);
  }

  /**
   * Checks the media and, for bytes, stores them as the media of `outboxId` (durably). On any refusal
   * nothing is left on disk; an upload's temporary file is the caller's to remove.
   */
  async accept(
    deviceId: string,
    outboxId: string,
    kind: MediaKind,
    input: MediaInput,
    fields: MediaFields,
  ): Promise<MediaSource> {
    const filename = fields.filename;
    switch (input.from) {
      case 'url': {
        const refusal = this.guard.refusalOf(input.url);
        if (refusal) throw invalidField('/url', refusal);
        return { source: 'url', url: input.url, ...optional({ mimetype: fields.mimetype, filename }) };
      }
      case 'base64': {
        const { bytes, declaredType } = this.decodeBase64(kind, input.text);
        const mimetype = await this.mimetypeOf(kind, fields.mimetype ?? declaredType, bytes);
        await this.store.write(deviceId, outboxId, bytes);
        return { source: 'stored', mimetype, size: bytes.length, ...optional({ filename }) };
      }
      case 'spooled': {
        const limit = this.limitOf(kind);
        if (input.size > limit) throw mediaTooLarge(kind, limit);
        const mimetype = await this.mimetypeOf(kind, fields.mimetype ?? input.declaredType, input.path);
        await this.store.adopt(deviceId, outboxId, input.path);
        return { source: 'stored', mimetype, size: input.size, ...optional({ filename }) };
      }
      case 'upload': {
        const limit = this.limitOf(kind);
        if (input.size > limit) throw mediaTooLarge(kind, limit);
        if (input.size === 0) throw invalidField('/file', 'is empty', 'the file part is empty');
        const mimetype = await this.mimetypeOf(kind, fields.mimetype, input.path);
        await this.store.adopt(deviceId, outboxId, input.path);
        return { source: 'stored', mimetype, size: input.size, ...optional({ filename: filename ?? input.filename }) };
      }
    }
  }

  private decodeBase64(kind: MediaKind, text: string): { bytes: Buffer; declaredType?: string } {
    const dataUrl = DATA_URL.exec(text);
    const payload = (dataUrl ? text.slice(dataUrl[0].length) : text).replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(payload) || payload.length % 4 === 1) {
      throw invalidField('/base64', 'is not base64');
    }
    const limit = this.limitOf(kind);
    const padding = payload.endsWith('==') ? 2 : payload.endsWith('=') ? 1 : 0;
    if (Math.floor((payload.length * 3) / 4) - padding > limit) throw mediaTooLarge(kind, limit);
    const bytes = Buffer.from(payload, 'base64');
    if (bytes.length === 0) throw invalidField('/base64', 'is empty');
    const declaredType = dataUrl?.[1]?.toLowerCase();
    // It stands in for `mimetype`, so it is held to the same rule.
    if (declaredType && !isMimetype(declaredType))
      throw invalidField(
        '/base64',
        'has a data URL type that is not a media type',
        'body/base64 is a data URL whose type is not a media type',
      );
    return declaredType ? { bytes, declaredType } : { bytes };
  }

  private async mimetypeOf(kind: MediaKind, given: string | undefined, bytes: Uint8Array | string): Promise<string> {
    try {
      return await resolveMimetype(kind, given?.toLowerCase(), bytes);
    } catch (error) {
      if (error instanceof MediaTypeError) throw new DomainError('unsupported_media_type', error.message);
      throw error;
    }
  }
}

function optional<T extends Record<string, string | undefined>>(fields: T): Partial<Record<keyof T, string>> {
  const out: Partial<Record<keyof T, string>> = {};
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) out[name as keyof T] = value;
  return out;
}
