/**
 * A full disk: the gateway (a real process) runs on a small tmpfs that the test fills up. Sends answer
 * 507 insufficient_storage (or are still accepted while SQLite has room), never 500; /health says
 * degraded; nothing acknowledged is lost; once space returns everything works again, and both SQLite
 * files pass `PRAGMA integrity_check`. Mounting needs root (as in CI); where it is not permitted, the
 * same run limits the gateway's file size instead (RLIMIT_FSIZE set on the running child with prlimit:
 * writes then fail with EFBIG, which SQLite reports as an I/O error, so text sends may answer 503).
 * DISK_FULL_MODE=rlimit forces the fallback.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildGateway, spawnGateway } from '../support/child-gateway.js';
import { eventually } from '../support/eventually.js';
import { fill, mountTmpfs } from '../support/full-disk.js';
import { ADMIN_KEY, tempDir } from '../support/gateway.js';

const TO = '4915112345678';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

function hasPrlimit(): boolean {
  try {
    execFileSync('prlimit', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const root = tempDir('dmg-diskfull-');
const mountPoint = join(root, 'mnt');
mkdirSync(mountPoint);
const mounted = process.env.DISK_FULL_MODE !== 'rlimit' && process.getuid?.() === 0 && mountTmpfs(mountPoint, '48m');
const mode = mounted ? 'tmpfs' : hasPrlimit() ? 'rlimit' : undefined;

/** Largest file under `dir`, in bytes. */
function largestFile(dir: string): number {
  let largest = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) largest = Math.max(largest, statSync(join(entry.parentPath ?? entry.path, entry.name)).size);
  }
  return largest;
}

describe(`a full disk (${mode})`, () => {
  let gateway: ChildGateway | undefined;
  beforeAll(() => {
    // Root mounts a tmpfs (CI runs as root); otherwise util-linux's prlimit limits the gateway's file size.
    if (mode === undefined) throw new Error('a full disk needs root (tmpfs) or prlimit (util-linux) on this machine');
  });
  afterAll(async () => {
    await gateway?.stop();
    if (mounted) execFileSync('umount', [mountPoint]);
    rmSync(root, { recursive: true, force: true });
  });

  it('answers 507, reports it in /health, loses nothing acknowledged and recovers when space returns', async () => {
    const dataDir = join(mountPoint, 'data');
    gateway = await spawnGateway(dataDir, { DISK_FREE_MIN_BYTES: String(4 * 1024 * 1024) });
    const g = gateway;
    const call = async (method: string, path: string, body?: unknown, key = ADMIN_KEY) => {
      const response = await fetch(`${g.url}${path}`, {
        method,
        headers: { 'x-admin-key': key, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      });
      const text = await response.text();
      return {
        status: response.status,
        type: response.headers.get('content-type') ?? '',
        retryAfter: response.headers.get('retry-after'),
        body: text ? JSON.parse(text) : undefined,
      };
    };
    expect((await call('POST', '/devices', { id: 'shop', name: 'Shop', engine: 'sandbox' })).status).toBe(201);
    const acknowledged: string[] = [];
    const sendText = async (i: number) => {
      const answer = await call('POST', '/devices/shop/send/text', {
        to: TO,
        text: `message ${i} ${'x'.repeat(2000)}`,
      });
      if (answer.status === 202) acknowledged.push(answer.body.waMessageId);
      return answer;
    };
    for (let i = 0; i < 5; i++) expect((await sendText(i)).status).toBe(202);
    expect((await call('GET', '/health')).status).toBe(200);

    const pid = g.process.pid!;
    let restore: () => void;
    let fsizeLimit = 0;
    if (mode === 'tmpfs') {
      const filler = fill(mountPoint);
      restore = () => rmSync(filler);
    } else {
      // No file of the gateway may grow past what the largest is now (plus a little): the WAL soon hits it.
      fsizeLimit = largestFile(dataDir) + 32 * 1024;
      execFileSync('prlimit', ['--pid', String(pid), `--fsize=${fsizeLimit}:unlimited`]);
      restore = () => execFileSync('prlimit', ['--pid', String(pid), '--fsize=unlimited']);
    }
    // SQLite may still have room in pages it already holds: send until the disk-full answer shows.
    const statuses: Record<number, number> = {};
    let full: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 5; i < 400 && !full; i++) {
      const answer = await sendText(i);
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      expect([202, 503, 507], `${JSON.stringify(answer.body)}\n${g.output().slice(-3000)}`).toContain(answer.status);
      if (answer.status !== 202) full = answer;
    }
    if (mode === 'tmpfs') {
      expect(full?.status).toBe(507);
      expect(full?.body.code).toBe('insufficient_storage');
    } else {
      expect([503, 507]).toContain(full?.status);
    }
    expect(full?.type).toContain('application/problem+json');
    expect(full?.retryAfter ?? full?.body.code).toBeTruthy();
    // A media file larger than what may still be written.
    const image = Buffer.concat([PNG, Buffer.alloc(Math.max(256 * 1024, fsizeLimit + 64 * 1024), 1)]);
    const media = await call('POST', '/devices/shop/send/image', { to: TO, base64: image.toString('base64') });
    expect(media.status).toBe(507);
    expect(media.body.code).toBe('insufficient_storage');
    const health = await call('GET', '/health');
    expect(health.status).toBe(503);
    expect(health.body.status).toBe('degraded');
    if (mode === 'tmpfs') expect(health.body.disk.low).toBe(true);
    expect(health.body.disk.writeFailing).toBe(true);
    console.log(
      `disk full (${mode}): sends while filling ${JSON.stringify(statuses)}, media ${media.status}, health ${health.status} ${JSON.stringify(health.body.disk)}`,
    );

    // Space returns: the same process carries on by itself.
    restore();
    for (let i = 0; i < 5; i++) expect((await sendText(1000 + i)).status).toBe(202);
    expect((await call('POST', '/devices/shop/send/image', { to: TO, base64: PNG.toString('base64') })).status).toBe(
      202,
    );
    // The store's writes clear its flag at once; the read models' runner writes again at its next try (a second after
    // a failed batch), and /health says degraded until then.
    const recovered = await eventually(async () => {
      const answer = await call('GET', '/health');
      if (answer.status !== 200) throw new Error(`${answer.status} ${JSON.stringify(answer.body)}`);
      return answer;
    }, 'a healthy /health once space returned');
    expect(recovered.body.disk).toMatchObject({ low: false, writeFailing: false });
    const listed = await call('GET', '/devices/shop/outbox?limit=500');
    const queued = new Set((listed.body.items as Array<{ waMessageId: string }>).map((m) => m.waMessageId));
    await gateway.stop();
    gateway = undefined;

    // Every acknowledged send is in the log (and in the outbox read model), and both files are sound.
    const events = new Database(join(dataDir, 'events.sqlite'), { readonly: true });
    const logged = events.prepare("SELECT data FROM events WHERE stream_id = 'outbox-shop'").all() as Array<{
      data: string;
    }>;
    const text = logged.map((row) => row.data).join('\n');
    const lost = acknowledged.filter((id) => !text.includes(id));
    expect(events.pragma('integrity_check', { simple: true })).toBe('ok');
    events.close();
    const readModels = new Database(join(dataDir, 'read-models.sqlite'), { readonly: true });
    expect(readModels.pragma('integrity_check', { simple: true })).toBe('ok');
    readModels.close();
    console.log(
      `disk full (${mode}): ${acknowledged.length} sends acknowledged, ${lost.length} lost, integrity_check ok`,
    );
    expect(lost).toEqual([]);
    for (const id of acknowledged) expect(queued.has(id), id).toBe(true);
  }, 120_000);
});
