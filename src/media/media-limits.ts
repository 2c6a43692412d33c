import type { MediaSettings } from '../config.js';
import type { MediaKind } from './media-kinds.js';

/** Largest media of a kind, in bytes: files have their own limit, images, audio and video share one. */
export const mediaLimitOf = (kind: MediaKind, settings: MediaSettings): number =>
  kind === 'file'
    ? settings.fileMaxBytes
    : kind === 'sticker'
      ? Math.min(STICKER_MAX_BYTES, settings.maxBytes)
      : settings.maxBytes;

/** WhatsApp's limit for stickers (static or animated WebP). */
export const STICKER_MAX_BYTES = 1024 * 1024;

/** Bytes of the base64 text of `bytes` bytes of media. */
export const base64LengthOf = (bytes: number): number => Math.ceil(bytes / 3) * 4;
