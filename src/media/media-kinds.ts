/**
 * The kinds of media a message carries and where their bytes are. The outbox records them in its events
 * (src/outbox/stream/outbox-events.ts); the media modules read, check and keep them.
 */
export const MEDIA_KINDS = ['image', 'audio', 'video', 'file', 'sticker'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/**
 * Where a media message's bytes are: a file the gateway keeps in DATA_DIR until the message leaves the
 * outbox (path derived from device and outboxId, see MediaStore), or a URL fetched when it is sent.
 */
export type MediaSource =
  | { source: 'stored'; mimetype: string; size: number; filename?: string }
  | { source: 'url'; url: string; mimetype?: string; filename?: string };
