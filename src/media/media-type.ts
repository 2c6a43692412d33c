/**
 * The media type of a message's bytes: detected from the bytes themselves (file-type reads the magic
 * numbers) when the client gave none, and checked against the kind of message it travels in.
 */
import { fileTypeFromBuffer, fileTypeFromFile } from 'file-type';
import type { MediaKind } from './media-kinds.js';

export const GENERIC_MIMETYPE = 'application/octet-stream';

/** type/subtype per RFC 6838 (parameters such as `; codecs=opus` allowed). */
export const MIMETYPE_PATTERN =
  '^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(\\s*;\\s*[A-Za-z0-9!#$&^_.+-]+=[^;]{1,128}){0,4}$';

/** The longest `mimetype` a send takes (as its schema says). */
const MIMETYPE_MAX_LENGTH = 255;

const MIMETYPE = new RegExp(MIMETYPE_PATTERN);

/** Whether `value` passes as a send's `mimetype` field (a data URL's type is held to the same rule). */
export function isMimetype(value: string): boolean {
  return value.length <= MIMETYPE_MAX_LENGTH && MIMETYPE.test(value);
}

/** Visible ASCII and spaces: what an HTTP header value may carry here (Node refuses control characters and beyond Latin-1). */
const HEADER_SAFE = /^[\t\x20-\x7e]*$/;

/**
 * The type to answer a stored media with: received media carry whatever their sender's app claimed, so a
 * type that is not one (or would not pass as a header) is served as bytes.
 */
export function servableMimetype(mimetype: string | undefined): string {
  return mimetype !== undefined && MIMETYPE.test(mimetype) && HEADER_SAFE.test(mimetype) ? mimetype : GENERIC_MIMETYPE;
}

export async function detectMimetype(bytes: Uint8Array | string): Promise<string | undefined> {
  const found = typeof bytes === 'string' ? await fileTypeFromFile(bytes) : await fileTypeFromBuffer(bytes);
  return found?.mime;
}

/** Why `mimetype` cannot travel as this kind of message, or undefined when it can. Files take anything. */
export function mimetypeMismatch(kind: MediaKind, mimetype: string): string | undefined {
  if (kind === 'file') return undefined;
  if (kind === 'sticker')
    return mimetype.split(';')[0].trim().toLowerCase() === 'image/webp'
      ? undefined
      : `is ${mimetype}, not a WebP sticker`;
  const family = mimetype.split('/')[0].toLowerCase();
  // An audio track in an MP4 or Ogg container is often detected as video/mp4 or video/ogg.
  const accepted = kind === 'audio' ? ['audio', 'video'] : [kind];
  return accepted.includes(family) ? undefined : `is ${mimetype}, not ${kind === 'audio' ? 'audio' : `an ${kind}`}`;
}

/**
 * The type to send with: the client's when given, else the detected one; when the bytes are not recognised,
 * `undetected` if it fits the kind, else a file stays generic and other kinds are refused. Throws a
 * MediaTypeError saying why not.
 */
export async function resolveMimetype(
  kind: MediaKind,
  given: string | undefined,
  bytes: Uint8Array | string,
  undetected?: string,
): Promise<string> {
  if (given) {
    const mismatch = mimetypeMismatch(kind, given);
    if (mismatch) throw new MediaTypeError(`mimetype ${mismatch}`);
    return given;
  }
  const detected = await detectMimetype(bytes);
  if (!detected) {
    if (undetected && !mimetypeMismatch(kind, undetected)) return undetected;
    if (kind === 'file') return GENERIC_MIMETYPE;
    throw new MediaTypeError(`the ${kind}'s type could not be recognised from its bytes; give mimetype`);
  }
  const mismatch = mimetypeMismatch(kind, detected);
  if (mismatch) throw new MediaTypeError(`the content ${mismatch}`);
  return detected;
}

export class MediaTypeError extends Error {
  override readonly name = 'MediaTypeError';
}
