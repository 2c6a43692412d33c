/**
 * MediaStore.keepSent: a sent message's media moves from the outbox to the received media (by its waMessageId).
 * A rename; across file systems (EXDEV) a copy, fsynced and renamed into place; when that fails too, the outbox
 * file is removed as before media were kept (the drainer logs the error and goes on).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const faults = vi.hoisted(() => ({ renameExdev: false, copyFails: false }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs/promises')>();
  const fail = (code: string) => Object.assign(new Error(code), { code });
  // Only the move out of the outbox crosses file systems; the temporary copy's rename into place does not.
  const rename = async (from: string, to: string) => {
    if (faults.renameExdev && !from.endsWith('.part')) throw fail('EXDEV');
    return original.rename(from, to);
  };
  const copyFile = async (...args: Parameters<typeof original.copyFile>) => {
    if (faults.copyFails) throw fail('ENOSPC');
    return original.copyFile(...args);
  };
  return (await import('../support/fsync-recorder.js')).recordingSyncs(original, { rename, copyFile } as never);
});

const { synced } = await import('../support/fsync-recorder.js');

const { MediaStore } = await import('../../src/media/media-store.js');
const { InboundMediaStore } = await import('../../src/media/inbound-media-store.js');
const { tempDir } = await import('../support/temp-dir.js');

async function storeWithSent(bytes = 'the bytes') {
  const dataDir = tempDir('dmg-keep-sent-');
  const store = new MediaStore(dataDir);
  await store.init();
  await store.write('shop', 'o-1', Buffer.from(bytes));
  return { store, kept: new InboundMediaStore(dataDir).pathOf('shop', '3EB0AA') };
}

describe("keeping a sent message's media", () => {
  beforeEach(() => {
    faults.renameExdev = false;
    faults.copyFails = false;
    synced.splice(0);
  });

  it('moves the file to where received media are kept, under the waMessageId', async () => {
    const { store, kept } = await storeWithSent();
    expect(await store.keepSent('shop', 'o-1', '3EB0AA')).toBe('moved');
    expect(store.keptPathOf('shop', '3EB0AA')).toBe(kept);
    expect(readFileSync(kept, 'utf8')).toBe('the bytes');
    expect(existsSync(store.pathOf('shop', 'o-1'))).toBe(false);
  });

  it('on another file system, copies (fsynced, renamed into place) and removes the outbox file', async () => {
    const { store, kept } = await storeWithSent();
    faults.renameExdev = true;
    synced.splice(0);
    expect(await store.keepSent('shop', 'o-1', '3EB0AA')).toBe('copied');
    expect(readFileSync(kept, 'utf8')).toBe('the bytes');
    expect(synced).toHaveLength(1);
    expect(synced[0]).toMatch(/\.part$/);
    expect(readdirSync(dirname(kept))).toEqual([kept.split('/').pop()]);
    expect(existsSync(store.pathOf('shop', 'o-1'))).toBe(false);
  });

  it('when the copy fails too, removes the outbox file, keeps nothing, and throws', async () => {
    const { store, kept } = await storeWithSent();
    faults.renameExdev = true;
    faults.copyFails = true;
    await expect(store.keepSent('shop', 'o-1', '3EB0AA')).rejects.toThrow('ENOSPC');
    expect(existsSync(store.pathOf('shop', 'o-1'))).toBe(false);
    expect(readdirSync(dirname(kept))).toEqual([]);
  });

  it('answers missing when there is no file', async () => {
    const { store, kept } = await storeWithSent();
    await store.remove('shop', 'o-1');
    expect(await store.keepSent('shop', 'o-1', '3EB0AA')).toBe('missing');
    expect(existsSync(kept)).toBe(false);
  });
});
