/**
 * Device keys must not be able to exhaust the gateway's memory with media bodies: 24 hostile bodies
 * at once (gzip bombs that inflate far past every limit, and big base64 bodies) against a real gateway
 * process, whose resident memory is read from /proc. Before the fix one 132 KB bomb cost ~350 MB and
 * 24 in parallel ended the process.
 */
import { rmSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildGateway, spawnGateway } from '../../support/child-gateway.js';
import { ADMIN_KEY, tempDir } from '../../support/gateway.js';
import { memoryOf, rawRequest, resetPeak } from '../../support/raw-http.js';

const TO = '4915112345678';
const MiB = 1024 * 1024;
/** The stated bound: the gateway's peak resident memory under the hostile load. */
const PEAK_RSS_BOUND_MiB = 400;

describe('hostile media bodies (memory)', () => {
  const dataDir = tempDir('dmg-memory-');
  let gateway: ChildGateway;
  /** One device per kind of body: a device may have only half the gate's slots (8 of 16), and all 24 are to be read at once. */
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    gateway = await spawnGateway(dataDir, {
      MEDIA_MAX_BYTES: String(16 * MiB),
      MEDIA_FILE_MAX_BYTES: String(16 * MiB),
    });
    for (const id of ['bombs', 'fields', 'big']) {
      const created = await fetch(`${gateway.url}/devices`, {
        method: 'POST',
        headers: { 'x-admin-key': ADMIN_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ id, name: id, engine: 'sandbox' }),
      });
      keys[id] = ((await created.json()) as { deviceKey: string }).deviceKey;
    }
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the peak RSS under the bound with 24 hostile bodies in parallel', async () => {
    // 136 MiB of base64 text (the old JSON limit of /send/file), gzipped to ~130 KB.
    const base64Bomb = gzipSync(
      Buffer.concat([
        Buffer.from(`{"to":"${TO}","filename":"a.bin","base64":"`),
        Buffer.alloc(136 * MiB, 'A'),
        Buffer.from('"}'),
      ]),
    );
    // The same size of text in a field that is kept in memory.
    const fieldBomb = gzipSync(
      Buffer.concat([
        Buffer.from(`{"to":"${TO}","filename":"a.bin","caption":"`),
        Buffer.alloc(136 * MiB, 'x'),
        Buffer.from('"}'),
      ]),
    );
    // A legitimate-looking 16 MiB file as plain base64 JSON (~22 MB on the wire).
    const media = Buffer.alloc(16 * MiB - 1, 7);
    const bigBase64 = Buffer.from(JSON.stringify({ to: TO, filename: 'b.bin', base64: media.toString('base64') }));
    expect(base64Bomb.length).toBeLessThan(200_000);

    const pid = gateway.process.pid!;
    const idle = memoryOf(pid);
    resetPeak(pid);
    const headers = (device: string) => ({ 'x-device-key': keys[device], 'content-type': 'application/json' });
    const gz = (device: string) => ({ ...headers(device), 'content-encoding': 'gzip' });
    const requests = [
      ...Array.from({ length: 8 }, () =>
        rawRequest(gateway.url, 'POST', '/devices/bombs/send/file', gz('bombs'), base64Bomb),
      ),
      ...Array.from({ length: 8 }, () =>
        rawRequest(gateway.url, 'POST', '/devices/fields/send/file', gz('fields'), fieldBomb),
      ),
      ...Array.from({ length: 8 }, () =>
        rawRequest(gateway.url, 'POST', '/devices/big/send/file', headers('big'), bigBase64),
      ),
    ];
    let peak = idle.rssMiB;
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, memoryOf(pid).rssMiB);
      } catch {
        // the process is gone: the assertions below say so
      }
    }, 50);
    const answers = await Promise.all(requests);
    clearInterval(sampler);
    const after = memoryOf(pid);
    peak = Math.max(peak, after.peakMiB);
    const statuses = answers.map((a) => a.status);
    console.log(
      `media memory: idle RSS ${idle.rssMiB} MiB, peak under load ${peak} MiB, after ${after.rssMiB} MiB; statuses ${JSON.stringify(count(statuses))}`,
    );

    expect(gateway.process.exitCode).toBeNull();
    expect(peak).toBeLessThan(PEAK_RSS_BOUND_MiB);
    // Bombs are refused (413), deferred had the queue been full (503), or cut for arriving slower than the body
    // gate's floor rate (408: a starved sender on a loaded machine); no 5xx otherwise.
    for (const answer of answers.slice(0, 16)) expect([408, 413, 503, -1]).toContain(answer.status);
    for (const answer of answers.slice(16)) expect([202, 503]).toContain(answer.status);
    expect(answers.slice(16).filter((a) => a.status === 202).length).toBeGreaterThan(0);
    // And it still answers.
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
  }, 120_000);
});

function count(values: number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
