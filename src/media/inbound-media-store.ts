/**
 * Received media on disk: DATA_DIR/inbound-media/<deviceId>/<sha256 of the waMessageId>. Bytes are
 * streamed from the engine to a temporary file (never whole in memory), hashed and counted on the way,
 * cut off past the size limit, made durable, then renamed into place.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export class MediaTooLargeError extends Error {
  override readonly name = 'MediaTooLargeError';
}

export class InboundMediaStore {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = join(dataDir, 'inbound-media');
  }

  pathOf(deviceId: string, waMessageId: string): string {
    return join(this.root, deviceId, createHash('sha256').update(waMessageId).digest('hex'));
  }

  /** Streams `source` into the message's file; throws MediaTooLargeError past `limit` bytes (nothing is kept then). */
  async save(deviceId: string, waMessageId: string, source: Readable, limit: number): Promise<{ size: number; sha256: string }> {
    const dir = join(this.root, deviceId);
    await mkdir(dir, { recursive: true });
    const final = this.pathOf(deviceId, waMessageId);
    const temporary = `${final}.${randomUUID().slice(0, 8)}.part`;
    const hash = createHash('sha256');
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        size += chunk.length;
        if (size > limit) return callback(new MediaTooLargeError(`the media is larger than the limit of ${limit} bytes`));
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    try {
      await pipeline(source, meter, createWriteStream(temporary, { mode: 0o600, highWaterMark: 1024 * 1024 }));
      const file = await open(temporary, 'r');
      try {
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temporary, final);
    } catch (error) {
      source.destroy();
      await rm(temporary, { force: true });
      throw error;
    }
    return { size, sha256: hash.digest('hex') };
  }

  async size(deviceId: string, waMessageId: string): Promise<number | undefined> {
    try {
      return (await stat(this.pathOf(deviceId, waMessageId))).size;
    } catch {
      return undefined;
    }
  }

  async remove(deviceId: string, waMessageId: string): Promise<void> {
    await rm(this.pathOf(deviceId, waMessageId), { force: true });
  }
}
