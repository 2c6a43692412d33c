/**
 * The media of a sandbox inbound message as the simulated network keeps it for the device to download: the
 * request body's decoded file, moved aside and streamed at each download, so messages waiting to be recorded
 * hold no media in memory. The file goes once the message is recorded; only if the device's download failed
 * (to be tried again later) are the bytes kept, in memory, for those tries.
 */
import { createReadStream } from 'node:fs';
import { readFile, rename, unlink } from 'node:fs/promises';
import { Readable } from 'node:stream';

export type HeldMedia = { path: string; size: number } | { base64: string };

export class SandboxMedia {
  private bytes: Buffer | undefined;
  private released = false;

  private constructor(
    private readonly path: string | undefined,
    bytes: Buffer | undefined,
    readonly size: number,
  ) {
    this.bytes = bytes;
  }

  /** Bytes already in memory (a body without a media parser). */
  static inMemory(bytes: Buffer): SandboxMedia {
    return new SandboxMedia(undefined, bytes, bytes.length);
  }

  /** The file at `spooled`, moved to `held` (same directory) so that the request's own clean-up leaves it. */
  static async fromFile(spooled: string, held: string, size: number): Promise<SandboxMedia> {
    await rename(spooled, held);
    return new SandboxMedia(held, undefined, size);
  }

  /**
   * What another process of the gateway needs to take the media over (JSON: the held file, on the data directory
   * every process shares, or the bytes in base64): a sandbox injection carried to the device's owner.
   */
  describe(): HeldMedia {
    if (this.path) return { path: this.path, size: this.size };
    return { base64: (this.bytes ?? Buffer.alloc(0)).toString('base64') };
  }

  /** The media `describe` told of: this process releases it from now on. */
  static described(held: HeldMedia): SandboxMedia {
    if ('path' in held) return new SandboxMedia(held.path, undefined, held.size);
    return SandboxMedia.inMemory(Buffer.from(held.base64, 'base64'));
  }

  /** A fresh stream of the whole media (one per download attempt). */
  open(): Promise<Readable> {
    if (this.bytes) return Promise.resolve(Readable.from([this.bytes]));
    if (this.released || !this.path) return Promise.reject(new Error('the sandbox no longer has this media'));
    // Read to its known end: no last read to find the end of the file (every file operation costs the main thread here).
    if (this.size === 0) return Promise.resolve(Readable.from([]));
    return Promise.resolve(createReadStream(this.path, { highWaterMark: 1024 * 1024, start: 0, end: this.size - 1 }));
  }

  /**
   * The message is recorded (or refused): the file is removed. With `laterTries` (the device has not
   * stored the media yet and will try again), its later download attempts read the bytes kept in memory.
   */
  async release(laterTries: boolean): Promise<void> {
    if (!this.path || this.released) return;
    try {
      if (laterTries) this.bytes = await readFile(this.path);
    } finally {
      this.released = true;
      await unlink(this.path).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
    }
  }
}
