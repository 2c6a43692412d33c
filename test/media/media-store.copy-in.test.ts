/**
 * MediaStore.copyIn: another message's media copied to be a new message's (a forward) is durable before the
 * send is acknowledged, the file and its folder fsynced, like every other way media reach the store.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('node:fs/promises', async (importOriginal) =>
  (await import('../support/fsync-recorder.js')).recordingSyncs(await importOriginal()),
);

const { synced } = await import('../support/fsync-recorder.js');

const { MediaStore } = await import('../../src/media/media-store.js');
const { tempDir } = await import('../support/temp-dir.js');

describe('copying media into the store', () => {
  beforeEach(() => void synced.splice(0));

  it('copies the bytes and fsyncs the copy and its folder', async () => {
    const store = new MediaStore(tempDir('dmg-copy-in-'));
    await store.init();
    const from = join(store.incomingDir, 'original');
    await writeFile(from, 'the bytes');
    expect(await store.copyIn(from, 'shop', 'o-2')).toBe(true);
    expect(readFileSync(store.pathOf('shop', 'o-2'), 'utf8')).toBe('the bytes');
    expect(synced).toEqual([store.pathOf('shop', 'o-2'), join(store.root, 'shop')]);
  });

  it('answers false, leaving nothing behind, when the source is gone', async () => {
    const store = new MediaStore(tempDir('dmg-copy-in-'));
    await store.init();
    expect(await store.copyIn(join(store.incomingDir, 'gone'), 'shop', 'o-3')).toBe(false);
    expect(existsSync(store.pathOf('shop', 'o-3'))).toBe(false);
  });
});
