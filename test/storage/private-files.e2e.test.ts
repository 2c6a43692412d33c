/**
 * DATA_DIR holds message text, webhook secrets and credentials: a real gateway process creates its
 * folders 0700 and its files 0600 (SQLite's WAL and shared memory included), and tightens a data
 * directory an older version left readable to all.
 */
import { chmodSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnGateway } from '../support/child-gateway.js';
import { ADMIN_KEY, tempDir } from '../support/gateway.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** Every folder and file under `dir`, with its mode. */
function modes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (path: string, name: string) => {
    out[name] = modeOf(path);
    if (statSync(path).isDirectory())
      for (const entry of readdirSync(path)) walk(join(path, entry), `${name}/${entry}`);
  };
  walk(dir, '.');
  return out;
}

describe('file modes of DATA_DIR', () => {
  const root = tempDir('dmg-modes-');
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('creates folders 0700 and files 0600 (SQLite files, WAL, media, admin key)', async () => {
    const dataDir = join(root, 'fresh');
    // The key is generated, so that admin.key is written too.
    const gateway = await spawnGateway(dataDir, { ADMIN_API_KEY: '' });
    try {
      const adminKey = gateway.output().match(/\n\s+(ak_\S+)\n/)?.[1] ?? '';
      expect(adminKey).not.toBe('');
      // Printed once on the terminal, never inside a structured (JSON) log line.
      const logLines = gateway
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'));
      expect(logLines.some((line) => line.includes('generated the admin API key'))).toBe(true);
      expect(logLines.some((line) => line.includes(adminKey))).toBe(false);
      const headers = { 'x-admin-key': adminKey, 'content-type': 'application/json' };
      const created = await fetch(`${gateway.url}/devices`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ id: 'shop', name: 'S', engine: 'sandbox' }),
      });
      expect(created.status).toBe(201);
      const sent = await fetch(`${gateway.url}/devices/shop/send/image`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ to: '4915112345678', base64: PNG.toString('base64') }),
      });
      expect(sent.status).toBe(202);
      const found = modes(dataDir);
      expect(Object.keys(found)).toEqual(
        expect.arrayContaining([
          './events.sqlite',
          './events.sqlite-wal',
          './read-models.sqlite-wal',
          './admin.key',
          './media/shop',
        ]),
      );
      for (const [path, mode] of Object.entries(found)) {
        expect(mode, path).toBe(statSync(join(dataDir, path)).isDirectory() ? '700' : '600');
      }
    } finally {
      await gateway.stop();
    }
  }, 60_000);

  it('tightens a data directory left readable to all', async () => {
    const dataDir = join(root, 'old');
    mkdirSync(join(dataDir, 'media', 'shop'), { recursive: true, mode: 0o755 });
    writeFileSync(join(dataDir, 'events.sqlite'), '', { mode: 0o644 });
    chmodSync(dataDir, 0o755);
    const gateway = await spawnGateway(dataDir, { ADMIN_API_KEY: ADMIN_KEY });
    try {
      expect(modeOf(dataDir)).toBe('700');
      expect(modeOf(join(dataDir, 'events.sqlite'))).toBe('600');
      expect(modeOf(join(dataDir, 'media'))).toBe('700');
      expect(modeOf(join(dataDir, 'media', 'shop'))).toBe('700');
    } finally {
      await gateway.stop();
    }
  }, 60_000);
});
