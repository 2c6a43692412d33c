/** The media of a sandbox inbound message: read from its file at each download, kept in memory only for later tries. */
import { existsSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { SandboxMedia } from '../../../src/engines/sandbox/sandbox-media.js';
import { tempDir } from '../../support/temp-dir.js';

async function all(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

describe('sandbox inbound media', () => {
  it("outlives the request's clean-up, serves every download from disk, and is removed once the message is recorded", async () => {
    const dir = tempDir('dmg-sandbox-media-');
    const spooled = join(dir, 'base64-1');
    writeFileSync(spooled, 'hello');
    const media = await SandboxMedia.fromFile(spooled, `${spooled}.sandbox`, 5);
    expect(existsSync(spooled)).toBe(false); // moved aside
    await rm(spooled, { force: true }); // the request's clean-up
    expect(media.size).toBe(5);
    expect(await all(await media.open())).toBe('hello');
    expect(await all(await media.open())).toBe('hello');
    await media.release(false);
    expect(existsSync(`${spooled}.sandbox`)).toBe(false);
    await expect(media.open()).rejects.toThrow('no longer');
  });

  it('keeps the bytes in memory for later download attempts when the device has not stored them', async () => {
    const dir = tempDir('dmg-sandbox-media-');
    const spooled = join(dir, 'base64-2');
    writeFileSync(spooled, 'again');
    const media = await SandboxMedia.fromFile(spooled, `${spooled}.sandbox`, 5);
    await media.release(true);
    expect(existsSync(`${spooled}.sandbox`)).toBe(false);
    expect(await all(await media.open())).toBe('again');
  });
});
