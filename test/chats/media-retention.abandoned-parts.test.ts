/**
 * A crash in the middle of a write leaves its `<final>.<8 hex>.part` file in DATA_DIR/inbound-media/<device>/:
 * the retention sweep removes those not written to for ABANDONED_PART_AFTER_MS (younger ones may be another
 * process's write in progress), and nothing else.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { MediaRetention } from '../../src/chats/media-retention.js';
import { ABANDONED_PART_AFTER_MS, InboundMediaStore } from '../../src/media/inbound-media-store.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp-dir.js';
import { TestClock } from '../support/test-clock.js';

const HASH = 'a'.repeat(64);
const noMedia = { mediaStoredBefore: () => [], revokedMediaAfter: () => [] };

/** Writes a file (its folder made) and sets its mtime `ageMs` into the past. */
async function fileAged(path: string, ageMs: number): Promise<string> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, 'bytes');
  const at = new Date(Date.now() - ageMs);
  await utimes(path, at, at);
  return path;
}

describe('abandoned partial media files', () => {
  it('removes old .part files in every device folder, keeps fresh ones and everything that is not a .part', async () => {
    const files = new InboundMediaStore(tempDir('dmg-abandoned-parts-'));
    const old = ABANDONED_PART_AFTER_MS + 60_000;
    const abandoned = [
      await fileAged(join(files.root, 'shop', `${HASH}.0a1b2c3d.part`), old),
      await fileAged(join(files.root, 'shop', `${'b'.repeat(64)}.deadbeef.part`), old),
      await fileAged(join(files.root, 'support', `${HASH}.12345678.part`), old),
    ];
    const kept = [
      // Another process may be writing it right now.
      await fileAged(join(files.root, 'shop', `${'c'.repeat(64)}.87654321.part`), 60_000),
      await fileAged(join(files.root, 'support', `${'d'.repeat(64)}.00ff00ff.part`), ABANDONED_PART_AFTER_MS - 60_000),
      // Finished media, and names that are not a temporary file's, however old.
      await fileAged(join(files.root, 'shop', HASH), old),
      await fileAged(join(files.root, 'support', HASH), old),
      await fileAged(join(files.root, 'shop', 'notes.part'), old),
      await fileAged(join(files.root, 'shop', `${HASH}.0a1b2c3d.part.bak`), old),
      // Not inside a device folder.
      await fileAged(join(files.root, `${HASH}.0a1b2c3d.part`), old),
    ];
    // A folder named like a temporary file is not one.
    const folder = join(files.root, 'shop', `${'e'.repeat(64)}.0a1b2c3d.part`);
    await mkdir(folder);
    await utimes(folder, new Date(Date.now() - old), new Date(Date.now() - old));

    expect(await files.removeAbandonedParts()).toBe(abandoned.length);
    for (const path of abandoned) expect(existsSync(path), path).toBe(false);
    for (const path of [...kept, folder]) expect(existsSync(path), path).toBe(true);
    expect(await files.removeAbandonedParts()).toBe(0);
  });

  it('no inbound-media folder yet: nothing to do', async () => {
    expect(await new InboundMediaStore(tempDir('dmg-abandoned-parts-')).removeAbandonedParts()).toBe(0);
  });

  it('a device folder removed meanwhile (its device deleted) is skipped, the others are swept', async () => {
    const dataDir = tempDir('dmg-abandoned-parts-');
    class FolderGoesMeanwhile extends InboundMediaStore {
      protected override async removeAbandonedPartsIn(dir: string, now: number): Promise<number> {
        // Between the listing of the device folders and the listing of this one.
        if (dir.endsWith('gone')) await rm(dir, { recursive: true });
        return super.removeAbandonedPartsIn(dir, now);
      }
    }
    const files = new FolderGoesMeanwhile(dataDir);
    const old = ABANDONED_PART_AFTER_MS + 60_000;
    await fileAged(join(files.root, 'gone', `${HASH}.0a1b2c3d.part`), old);
    const stays = await fileAged(join(files.root, 'stays', `${HASH}.0a1b2c3d.part`), old);
    expect(await files.removeAbandonedParts()).toBe(1);
    expect(existsSync(stays)).toBe(false);
    expect(existsSync(join(files.root, 'gone'))).toBe(false);
  });

  it('two processes sweeping at once: a file the other removed meanwhile is no error, each file counted once', async () => {
    const dataDir = tempDir('dmg-abandoned-parts-');
    const [one, other] = [new InboundMediaStore(dataDir), new InboundMediaStore(dataDir)];
    const paths: string[] = [];
    for (let i = 0; i < 40; i++) {
      paths.push(
        await fileAged(
          join(one.root, `device-${i % 4}`, `${HASH}.${i.toString(16).padStart(8, '0')}.part`),
          ABANDONED_PART_AFTER_MS + 1_000,
        ),
      );
    }
    const [a, b] = await Promise.all([one.removeAbandonedParts(), other.removeAbandonedParts()]);
    expect(a + b).toBe(paths.length);
    for (const path of paths) expect(existsSync(path)).toBe(false);
  });

  it('the retention sweep removes them at start', async () => {
    const files = new InboundMediaStore(tempDir('dmg-abandoned-parts-'));
    const abandoned = await fileAged(
      join(files.root, 'shop', `${HASH}.0a1b2c3d.part`),
      ABANDONED_PART_AFTER_MS + 60_000,
    );
    const fresh = await fileAged(join(files.root, 'shop', `${HASH}.11111111.part`), 0);
    // The next sweep is a minute away: only the one at start can remove it.
    const retention = new MediaRetention(noMedia, files, 60_000, pino({ level: 'silent' }));
    retention.start();
    try {
      await eventually(() => !existsSync(abandoned));
      expect(existsSync(fresh)).toBe(true);
    } finally {
      retention.stop();
    }
  });

  it('the retention sweep removes them on its interval', async () => {
    const files = new InboundMediaStore(tempDir('dmg-abandoned-parts-'));
    const old = ABANDONED_PART_AFTER_MS + 60_000;
    const first = await fileAged(join(files.root, 'shop', `${HASH}.0a1b2c3d.part`), old);
    const fresh = await fileAged(join(files.root, 'shop', `${HASH}.11111111.part`), 0);
    // A retention of a minute sweeps every minute, on a clock the test moves on.
    const clock = new TestClock();
    const retention = new MediaRetention(noMedia, files, 60_000, pino({ level: 'silent' }), clock);
    retention.start();
    try {
      await eventually(() => !existsSync(first));
      // Left after the sweep at start: only a later one can remove it.
      const later = await fileAged(join(files.root, 'support', `${HASH}.22222222.part`), old);
      await clock.advance(59_000);
      expect(existsSync(later)).toBe(true);
      await clock.advance(1_000);
      await eventually(() => !existsSync(later));
      expect(existsSync(fresh)).toBe(true);
    } finally {
      retention.stop();
    }
  });

  it('a sweep that fails is logged, never thrown', async () => {
    const dataDir = tempDir('dmg-abandoned-parts-');
    // inbound-media is a file, not a folder: listing it fails (ENOTDIR).
    await writeFile(join(dataDir, 'inbound-media'), 'not a folder');
    const warnings: string[] = [];
    const log = { warn: (_fields: unknown, message: string) => warnings.push(message) } as unknown as Logger;
    const retention = new MediaRetention(noMedia, new InboundMediaStore(dataDir), 60_000, log);
    expect(await retention.sweepAbandoned()).toBe(0);
    expect(warnings).toEqual(['removing abandoned partial media files failed']);
  });
});
