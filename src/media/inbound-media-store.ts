/**
 * Received media on disk: DATA_DIR/inbound-media/<deviceId>/<sha256 of the waMessageId>. Bytes are
 * streamed from the engine to a temporary file (never whole in memory), hashed and counted on the way,
 * cut off past the size limit, made durable, then renamed into place.
 */
import { createHash, randomUUID } from 'node:crypto';
import { type FileHandle, mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

export class MediaTooLargeError extends Error {
  override readonly name = 'MediaTooLargeError';
}

/** Received media are written in batches of about this size (a few system calls per MiB, a bounded buffer per download). */
const WRITE_BATCH_BYTES = 256 * 1024;

/** The temporary files of writes here (save) and of copies into this folder: `<final>.<8 hex>.part`. */
const PART_FILE = /\.[0-9a-f]{8}\.part$/;

/**
 * A `.part` file not written to for this long has no writer left (a crash, of this process or of another one
 * sharing DATA_DIR). Its mtime moves with every batch a download writes and as a copy goes, so this bounds the
 * silence of a live write, not its length: an engine download dies after minutes without bytes (the HTTP
 * client's idle timeout), a copy or an fsync of the largest media allowed (2 GiB) takes minutes at worst.
 */
export const ABANDONED_PART_AFTER_MS = 60 * 60_000;

export class InboundMediaStore {
  readonly root: string;
  /** Directories known to exist (made once, not before every file). */
  private readonly dirs = new Set<string>();

  constructor(dataDir: string) {
    this.root = join(dataDir, 'inbound-media');
  }

  pathOf(deviceId: string, waMessageId: string): string {
    return join(this.root, deviceId, createHash('sha256').update(waMessageId).digest('hex'));
  }

  /** Streams `source` into the message's file; throws MediaTooLargeError past `limit` bytes (nothing is kept then). */
  async save(
    deviceId: string,
    waMessageId: string,
    source: Readable,
    limit: number,
  ): Promise<{ size: number; sha256: string }> {
    const dir = join(this.root, deviceId);
    if (!this.dirs.has(dir)) {
      await mkdir(dir, { recursive: true });
      this.dirs.add(dir);
    }
    const final = this.pathOf(deviceId, waMessageId);
    const temporary = `${final}.${randomUUID().slice(0, 8)}.part`;
    const hash = createHash('sha256');
    let size = 0;
    let file: FileHandle | undefined;
    try {
      try {
        file = await open(temporary, 'w', 0o600);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        // The directory went away since it was made (its device's media were removed): made again.
        await mkdir(dir, { recursive: true });
        file = await open(temporary, 'w', 0o600);
      }
      // One handle for writing and syncing; chunks are gathered into writes of WRITE_BATCH_BYTES.
      let batch: Buffer[] = [];
      let batched = 0;
      const flush = async () => {
        const pieces = batch;
        const length = batched;
        batch = [];
        batched = 0;
        // The pieces as they came (not copied into one buffer); a short write (a disk filling up) is continued.
        const { bytesWritten } = await file!.writev(pieces);
        if (bytesWritten === length) return;
        const rest = Buffer.concat(pieces, length);
        for (let at = bytesWritten; at < rest.length;) at += (await file!.write(rest, at)).bytesWritten;
      };
      for await (const chunk of source as AsyncIterable<Buffer | string>) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        size += bytes.length;
        if (size > limit) throw new MediaTooLargeError(`the media is larger than the limit of ${limit} bytes`);
        hash.update(bytes);
        batch.push(bytes);
        batched += bytes.length;
        if (batched >= WRITE_BATCH_BYTES) await flush();
      }
      if (batched > 0) await flush();
      await file.sync();
      await file.close();
      file = undefined;
      await rename(temporary, final);
    } catch (error) {
      source.destroy();
      await file?.close().catch(() => undefined);
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

  /**
   * Removes the `.part` files a crash left in the device folders, those not written to for
   * ABANDONED_PART_AFTER_MS (younger ones may be another process's write in progress); answers how many.
   * Nothing else is touched; a folder or a file that goes meanwhile is skipped.
   */
  async removeAbandonedParts(now = Date.now()): Promise<number> {
    let removed = 0;
    for (const device of await entriesOf(this.root)) {
      if (device.isDirectory()) removed += await this.removeAbandonedPartsIn(join(this.root, device.name), now);
    }
    return removed;
  }

  /** One device folder of removeAbandonedParts. */
  protected async removeAbandonedPartsIn(dir: string, now: number): Promise<number> {
    let removed = 0;
    for (const entry of await entriesOf(dir)) {
      if (!entry.isFile() || !PART_FILE.test(entry.name)) continue;
      const path = join(dir, entry.name);
      try {
        if (now - (await stat(path)).mtimeMs < ABANDONED_PART_AFTER_MS) continue;
        await unlink(path);
        removed++;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    return removed;
  }
}

/** The entries of a folder; none when it does not exist (any more). */
async function entriesOf(dir: string) {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
