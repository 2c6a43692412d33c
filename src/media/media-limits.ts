import type { MediaSettings } from '../config.js';
import type { MediaKind } from './media-kinds.js';

/** Largest media of a kind, in bytes: files have their own limit, images, audio and video share one. */
export const mediaLimitOf = (kind: MediaKind, settings: MediaSettings): number => (kind === 'file' ? settings.fileMaxBytes : settings.maxBytes);

/** Bytes of the base64 text of `bytes` bytes of media. */
export const base64LengthOf = (bytes: number): number => Math.ceil(bytes / 3) * 4;
