/**
 * Media waiting in an outbox, kept on disk in DATA_DIR/media/<deviceId>/<outboxId> (never held in
 * memory) from the moment the send is accepted until the message leaves the outbox. A file is made
 * durable (file and directory fsynced) before the message that needs it is queued, so an acknowledged
 * media send survives a crash with its bytes. Once the message is sent, its file moves to the received
 * media (keepSent), kept for the same retention so that it can be forwarded.
 */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { InboundMediaStore } from './inbound-media-store.js';

/** Device ids start with a letter or digit, so these names never collide with a device's folder. */
const INCOMING = '.incoming';
const DOWNLOAD_SUFFIX = '.download';

export class MediaStore {
  readonly root: string;
  /** Where multipart uploads land before they are adopted (or thrown away). */
  readonly incomingDir: string;
  /** Where the media of sent messages are kept, with the received ones (swept by the same retention). */
  private readonly kept: InboundMediaStore;

  /**
   * `worker`: several processes share DATA_DIR (leases on): each has an incoming folder of its own, and a
   * sweep touches nothing but it (another process's uploads are in flight; media of messages it just queued
   * are not in this process's read models yet).
   */
  constructor(
    dataDir: string,
    private readonly options: { worker?: number } = {},
  ) {
    this.root = join(dataDir, 'media');
    this.kept = new InboundMediaStore(dataDir);
    this.incomingDir = join(this.root, options.worker === undefined ? INCOMING : `${INCOMING}-w${options.worker}`);
  }

  async init(): Promise<void> {
    await mkdir(this.incomingDir, { recursive: true, mode: 0o700 });
  }

  pathOf(deviceId: string, outboxId: string): string {
    return join(this.root, deviceId, outboxId);
  }

  /** A scratch path for a `url` media fetched at send time. */
  downloadPathOf(deviceId: string, outboxId: string): string {
    return join(this.root, deviceId, `${outboxId}.${randomUUID().slice(0, 8)}${DOWNLOAD_SUFFIX}`);
  }

  async ensureDeviceDir(deviceId: string): Promise<void> {
    await mkdir(join(this.root, deviceId), { recursive: true, mode: 0o700 });
  }

  /** Writes the bytes as the media of a message and makes them durable. */
  async write(deviceId: string, outboxId: string, bytes: Uint8Array): Promise<void> {
    await this.ensureDeviceDir(deviceId);
    const path = this.pathOf(deviceId, outboxId);
    const file = await open(path, 'w', 0o600);
    try {
      await file.writeFile(bytes);
      await file.sync();
    } finally {
      await file.close();
    }
    await syncDir(join(this.root, deviceId));
  }

  /** Moves an uploaded file (in incomingDir) to be the media of a message, durably. */
  async adopt(deviceId: string, outboxId: string, uploadedPath: string): Promise<void> {
    await this.ensureDeviceDir(deviceId);
    const file = await open(uploadedPath, 'r+');
    try {
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(uploadedPath, this.pathOf(deviceId, outboxId));
    await syncDir(join(this.root, deviceId));
  }

  /**
   * Copies a file (another message's media, a received one) to be the media of a message, durably; false,
   * with nothing left behind, when the source is gone.
   */
  async copyIn(from: string, deviceId: string, outboxId: string): Promise<boolean> {
    await this.ensureDeviceDir(deviceId);
    const path = this.pathOf(deviceId, outboxId);
    try {
      await copyFile(from, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    try {
      const file = await open(path, 'r+');
      try {
        await file.sync();
      } finally {
        await file.close();
      }
      await syncDir(join(this.root, deviceId));
    } catch (error) {
      await rm(path, { force: true });
      throw error;
    }
    return true;
  }

  async remove(deviceId: string, outboxId: string): Promise<void> {
    await rm(this.pathOf(deviceId, outboxId), { force: true });
  }

  /**
   * A sent message's media: moved from the outbox to where received media are kept, under its waMessageId.
   * `moved` (a rename), `copied` (DATA_DIR/media is on another file system: copied, fsynced, then renamed into
   * place, so that a forward never finds half a file) or `missing` (no file to keep). On any failure the outbox
   * file is removed, as it was before media were kept, and the error thrown.
   *
   * The rename is not fsynced: a crash may undo it, and so may one between the send and this move; the outbox
   * file left then is removed by the start-up sweep, and a forward of the message answers 410 media_expired,
   * as it did before sent media were kept. Acceptable: the message itself was sent and recorded.
   */
  async keepSent(deviceId: string, outboxId: string, waMessageId: string): Promise<'moved' | 'copied' | 'missing'> {
    const from = this.pathOf(deviceId, outboxId);
    const to = this.kept.pathOf(deviceId, waMessageId);
    try {
      await mkdir(dirname(to), { recursive: true });
      try {
        await rename(from, to);
        return 'moved';
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return 'missing';
        if (code !== 'EXDEV') throw error;
      }
      await copyDurably(from, to);
      await rm(from, { force: true });
      return 'copied';
    } catch (error) {
      await rm(from, { force: true });
      throw error;
    }
  }

  /** Where a sent message's media is kept once sent (see keepSent). */
  keptPathOf(deviceId: string, waMessageId: string): string {
    return this.kept.pathOf(deviceId, waMessageId);
  }

  async removePath(path: string): Promise<void> {
    await rm(path, { force: true });
  }

  /**
   * At start, before anything is queued: removes uploads and downloads a crash left behind, and the media
   * of messages that are no longer waiting (sent, failed or cancelled before their file was removed, or
   * never queued at all because the process died in between). Answers how many files went.
   */
  async sweep(isWaiting: (deviceId: string, outboxId: string) => boolean): Promise<number> {
    let removed = 0;
    await rm(this.incomingDir, { recursive: true, force: true });
    await mkdir(this.incomingDir, { recursive: true, mode: 0o700 });
    if (this.options.worker !== undefined) return 0;
    for (const device of await readdir(this.root, { withFileTypes: true })) {
      if (!device.isDirectory() || device.name.startsWith(INCOMING)) continue;
      for (const name of await readdir(join(this.root, device.name))) {
        if (name.endsWith(DOWNLOAD_SUFFIX) || !isWaiting(device.name, name)) {
          await rm(join(this.root, device.name, name), { force: true });
          removed++;
        }
      }
    }
    return removed;
  }
}

/** Copies `from` to `to` through a temporary file that is fsynced and then renamed into place. */
async function copyDurably(from: string, to: string): Promise<void> {
  const temporary = `${to}.${randomUUID().slice(0, 8)}.part`;
  try {
    await copyFile(from, temporary);
    const file = await open(temporary, 'r+');
    try {
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, to);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

async function syncDir(path: string): Promise<void> {
  const dir = await open(path, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
