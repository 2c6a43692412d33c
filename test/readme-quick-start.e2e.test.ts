/**
 * README's first session, run as a user runs it (issue 36): the shell block saved and run with `bash` in the
 * folder of a gateway's `data/admin.key`, against a real gateway. Each step prints its answer, one line each
 * (JSON ends with a newline: no blank lines), the comments say what comes, and `wait` ends once the receiver
 * has printed the webhook.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startTestGateway } from './support/gateway.js';
import { tempDir } from './support/temp-dir.js';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The shell block after "A first session". */
function firstSession(): string {
  const from = README.indexOf('A first session');
  const block = /```sh\n([\s\S]*?)```/.exec(README.slice(from));
  if (from < 0 || !block) throw new Error('README has no first session in a sh block');
  return block[1];
}

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("README's quick start", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('runs as a script: every step answers on a line of its own, and the webhook arrives before it ends', async () => {
    const gateway = await startTestGateway({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    close = () => gateway.close();
    // The folder the user is in: the gateway's admin key in data/admin.key, as its first start leaves it.
    const folder = tempDir('dmg-quick-start-');
    mkdirSync(join(folder, 'data'));
    writeFileSync(join(folder, 'data', 'admin.key'), `${ADMIN_KEY}\n`);
    const receiverPort = await freePort();
    const script = firstSession()
      .replaceAll('http://127.0.0.1:3000', gateway.url)
      .replaceAll('4000', String(receiverPort))
      // Where the QR code goes: this test's folder, not the machine's /tmp.
      .replaceAll('/tmp/qr.png', join(folder, 'qr.png'));
    expect(script).toContain(gateway.url);

    const { stdout } = await promisify(execFile)('bash', ['-c', script], {
      cwd: folder,
      timeout: 60_000,
      env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
    });
    const lines = stdout.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.filter((line) => line.trim() === '')).toEqual([]);
    const [key, opened, qr, scanned, online, queued, hook, inbound, delivered, ...more] = lines;
    expect(more).toEqual([]);
    expect(key).toMatch(/^dk_/);
    expect(JSON.parse(opened)).toEqual({ state: 'connecting' });
    expect(qr).toBe('image/png');
    expect(readFileSync(join(folder, 'qr.png')).subarray(1, 4).toString()).toBe('PNG');
    expect(JSON.parse(scanned)).toEqual({ state: 'connecting' });
    expect(JSON.parse(online)).toMatchObject({ state: 'online', phone: '4915112345678' });
    expect(JSON.parse(queued)).toMatchObject({ status: 'queued', to: '4915123456789', sessionState: 'online' });
    expect(JSON.parse(hook)).toMatchObject({ url: `http://127.0.0.1:${receiverPort}/hook`, secret: /^whsec_/ });
    const { waMessageId } = JSON.parse(inbound) as { waMessageId: string };
    expect(waMessageId).toMatch(/^3EB0/);
    // "<webhook-id> <body>", the body the envelope of the message the contact wrote.
    const [webhookId, body] = [delivered.slice(0, delivered.indexOf(' ')), delivered.slice(delivered.indexOf(' ') + 1)];
    expect(JSON.parse(body)).toMatchObject({
      id: webhookId,
      event: 'message.received',
      deviceId: 'shop-1',
      data: { waMessageId, from: '4915199999999', body: 'Where is my parcel?' },
    });
  }, 90_000);
});
