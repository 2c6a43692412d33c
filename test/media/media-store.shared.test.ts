/**
 * Several processes on one DATA_DIR: each has an incoming folder of its own, and the sweep at its start removes
 * nothing another process may need (its uploads in flight, the media of messages it just queued).
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MediaStore } from '../../src/media/media-store.js';
import { tempDir } from '../support/temp-dir.js';

describe('media of several processes on one DATA_DIR', () => {
  it("sweeps only its own uploads, never another process's uploads or queued media", async () => {
    const dataDir = tempDir('dmg-media-shared-');
    const first = new MediaStore(dataDir, { worker: 1 });
    const second = new MediaStore(dataDir, { worker: 2 });
    await first.init();
    await second.init();
    expect(first.incomingDir).not.toBe(second.incomingDir);
    const upload = join(second.incomingDir, 'upload-in-flight');
    await writeFile(upload, 'bytes');
    // Queued through the second process a moment ago: the first one's read models do not show it yet.
    await mkdir(join(second.root, 'shop-1'), { recursive: true });
    const queued = second.pathOf('shop-1', '01a20000-0000-7000-8000-000000000001');
    await writeFile(queued, 'bytes');
    const leftover = join(first.incomingDir, 'left-by-a-crash');
    await writeFile(leftover, 'bytes');

    expect(await first.sweep(() => false)).toBe(0);
    expect(existsSync(upload)).toBe(true);
    expect(existsSync(queued)).toBe(true);
    expect(existsSync(leftover)).toBe(false);
  });
});
