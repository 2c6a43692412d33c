import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxStream } from '../../src/messages/message-events.js';
import { ProjectionRunner } from '../../src/projections/projection-runner.js';
import { allProjections } from '../../src/read-models.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { pino } from 'pino';
import { webhooksStream } from '../../src/webhooks/delivery-events.js';
import { ADMIN_KEY, type Api, startTestGateway } from '../support/gateway.js';
import { createSandboxDevice, waitForState } from '../support/sessions.js';
import { eventually } from '../support/eventually.js';
import { runToEnd } from '../support/processes.js';

describe('device history', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  const secrets: string[] = [];

  beforeAll(async () => {
    const overrides = {
      DEFAULT_ENGINE: 'sandbox',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      SANDBOX_DELIVERED_DELAY_MS: '10',
      SANDBOX_READ_DELAY_MS: '20',
    };
    gateway = await startTestGateway(overrides);
    api = gateway.api;
    const device = await createSandboxDevice(api, 'audited');
    secrets.push(device.key);
    await createSandboxDevice(api, 'bystander');
    const qr = await (async () => {
      await api('POST', '/devices/audited/session/open', { deviceKey: device.key });
      return eventually(async () => {
        const answer = await api('GET', '/devices/audited/session/qr', { deviceKey: device.key });
        return answer.status === 200 ? (answer.body.qr as string) : undefined;
      }, 'a QR code');
    })();
    secrets.push(qr);
    await api('POST', '/sandbox/devices/audited/scan', { admin: true, json: { phone: '4915100000001' } });
    await waitForState(api, device, 'online');
    const hooks = await api('PUT', '/devices/audited/hooks', {
      deviceKey: device.key,
      json: { url: 'http://127.0.0.1:9/hook', events: ['message.received'] },
    });
    secrets.push(hooks.body.secret);
    const rotated = await api('PATCH', '/devices/audited', { admin: true, json: { rotateKey: true } });
    secrets.push(rotated.body.deviceKey);
    await api('POST', '/devices/audited/send/text', {
      deviceKey: rotated.body.deviceKey,
      json: { to: '4930123456789', text: 'hello' },
    });
    await api('POST', '/sandbox/devices/audited/inbound', {
      admin: true,
      json: { from: '4930123456789', body: 'hi back' },
    });
    await api('POST', '/sandbox/devices/bystander/inbound', {
      admin: true,
      json: { from: '4930123456789', body: 'not yours' },
    }).catch(() => undefined);
    // The history is complete once the sent message was read and the inbound message's webhook was tried.
    await eventually(
      async () =>
        (await gateway.store.readStream(outboxStream('audited'))).some(
          (e) => e.type === 'MessageStatusChanged' && (e.data as { status: string }).status === 'read',
        ),
      'the read receipt of the sent message',
    );
    await eventually(
      async () =>
        (await gateway.store.readStream(webhooksStream('audited'))).some((e) => e.type === 'WebhookDeliveryAttempted'),
      'a webhook attempt',
    );
  });
  afterAll(() => gateway.close());

  const allPages = async (limit: number) => {
    const items: Array<{
      position: number;
      stream: string;
      revision: number;
      type: string;
      data: Record<string, unknown>;
    }> = [];
    let from: number | null = 0;
    let pages = 0;
    while (from !== null) {
      const page: { status: number; body: { items: typeof items; next: number | null } } = await api(
        'GET',
        `/devices/audited/events?from=${from}&limit=${limit}`,
        { admin: true },
      );
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(limit);
      items.push(...page.body.items);
      from = page.body.next;
      pages++;
    }
    return { items, pages };
  };

  it('pages through every stream of the device in log order, and only that device', async () => {
    const { items, pages } = await allPages(3);
    expect(pages).toBeGreaterThan(2);
    const positions = items.map((i) => i.position);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(new Set(positions).size).toBe(positions.length);
    const streams = new Set(items.map((i) => i.stream));
    for (const prefix of ['device-', 'session-', 'outbox-', 'inbox-'])
      expect([...streams].some((s) => s === `${prefix}audited`)).toBe(true);
    expect(items.every((i) => (i.data as { deviceId?: string }).deviceId === 'audited')).toBe(true);
    const types = items.map((i) => i.type);
    expect(types[0]).toBe('DeviceCreated');
    expect(types).toEqual(
      expect.arrayContaining([
        'SessionStateChanged',
        'HooksConfigured',
        'DeviceKeyRotated',
        'OutboxMessageQueued',
        'MessageReceived',
      ]),
    );
    // The same history in one page.
    const whole = await allPages(1000);
    expect(whole.items).toEqual(items);
    // Per stream, revisions are complete and in order.
    for (const stream of streams) {
      const revisions = items.filter((i) => i.stream === stream).map((i) => i.revision);
      expect(revisions).toEqual(revisions.map((_, n) => n));
    }
  });

  it('starts at a position in the middle', async () => {
    const { items } = await allPages(1000);
    const middle = items[Math.floor(items.length / 2)];
    const page = await api('GET', `/devices/audited/events?from=${middle.position}&limit=2`, { admin: true });
    expect(page.body.items.map((i: { position: number }) => i.position)).toEqual(
      items.slice(Math.floor(items.length / 2), Math.floor(items.length / 2) + 2).map((i) => i.position),
    );
  });

  it('reads backwards, newest first: the latest events without paging through the rest', async () => {
    const { items } = await allPages(1000);
    const newestFirst = [...items].reverse();
    const latest = await api('GET', '/devices/audited/events?direction=backwards&limit=3', { admin: true });
    expect(latest.status).toBe(200);
    expect(latest.body.items).toEqual(newestFirst.slice(0, 3));
    expect(latest.body.next).toBe(newestFirst[3].position);
    // Paging on with `next` gives the whole history, newest first, and ends with null.
    const pages: Array<typeof items> = [];
    let from: number | null = null;
    do {
      const page: { status: number; body: { items: typeof items; next: number | null } } = await api(
        'GET',
        `/devices/audited/events?direction=backwards&limit=4${from === null ? '' : `&from=${from}`}`,
        { admin: true },
      );
      expect(page.status).toBe(200);
      pages.push(page.body.items);
      from = page.body.next;
    } while (from !== null);
    expect(pages.flat()).toEqual(newestFirst);
    // From any position, one of this device's or not: its events at or before it.
    const middle = Math.floor(items.length / 2);
    const between = items[middle].position + 1;
    const older = await api('GET', `/devices/audited/events?direction=backwards&from=${between}&limit=2`, {
      admin: true,
    });
    expect(older.body.items.map((i: { position: number }) => i.position)).toEqual(
      newestFirst
        .filter((i) => i.position <= between)
        .slice(0, 2)
        .map((i) => i.position),
    );
    expect((await api('GET', '/devices/audited/events?direction=sideways', { admin: true })).status).toBe(400);
  });

  it('redacts every secret: device keys, key hashes, webhook secrets, QR codes', async () => {
    const { items } = await allPages(1000);
    const text = JSON.stringify(items);
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/whsec_/);
    expect(text).not.toMatch(/"keyHash":"[0-9a-f]{64}"/);
    expect(text).toContain('[redacted]');
  });

  it("is read with the admin key only (the device's own key: 403), 404 for an id never used, and kept after delete", async () => {
    expect((await api('GET', '/devices/audited/events', { deviceKey: secrets[3] })).status).toBe(403);
    // The key it had before the rotation no longer reads anything.
    expect((await api('GET', '/devices/audited/events', { deviceKey: secrets[0] })).status).toBe(401);
    expect((await api('GET', '/devices/never-was/events', { admin: true })).status).toBe(404);
    expect((await api('GET', '/devices/audited/events?limit=1001', { admin: true })).status).toBe(400);
    expect((await api('DELETE', '/devices/bystander', { admin: true })).status).toBe(204);
    const kept = await api('GET', '/devices/bystander/events', { admin: true });
    expect(kept.status).toBe(200);
    expect(kept.body.items.map((i: { type: string }) => i.type)).toContain('DeviceDeleted');
  });

  it('rebuilding every read model from position 0 gives the same tables', async () => {
    const db = openReadModelDb(configDir(gateway));
    const tables = (
      db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'projection_checkpoints' ORDER BY name",
        )
        .all() as Array<{ name: string }>
    ).map((t) => t.name);
    const dump = () =>
      Object.fromEntries(
        tables.map((t) => [
          t,
          db
            .prepare(`SELECT * FROM ${t}`)
            .all()
            .map((row) => JSON.stringify(row))
            .sort(),
        ]),
      );
    await gateway.webhooks.stop(); // no delivery attempt may land between the two dumps
    const before = dump();
    const log = pino({ level: 'silent' });
    const runner = new ProjectionRunner(gateway.store, db, allProjections(db, gateway.store, log), log);
    await runner.rebuild();
    await runner.stop();
    const after = dump();
    // Lookup caches are not read models (they are answers of the network, kept apart on purpose).
    // The search index's FTS5 shadow tables hold b-tree segments whose layout depends on how the rows came in
    // (one bulk insert against many): test/chats/search.e2e.test.ts holds its answers the same after a rebuild.
    const compared = tables.filter((table) => !table.includes('lookup') && !table.startsWith('chat_messages_search'));
    for (const table of compared) expect(after[table], table).toEqual(before[table]);
    db.close();
  });

  it('npm run history prints the timeline, redacted', async () => {
    const result = await runToEnd(
      'src/cli/history.ts',
      { ...process.env, DATA_DIR: configDir(gateway), ADMIN_API_KEY: ADMIN_KEY },
      { args: ['audited', '--json'] },
    );
    expect(result.status).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; position: number });
    expect(lines[0].type).toBe('DeviceCreated');
    expect(lines.map((l) => l.type)).toContain('MessageReceived');
    for (const secret of secrets) expect(result.stdout).not.toContain(secret);
  });
});

function configDir(gateway: { dataDir?: string }): string {
  if (!gateway.dataDir) throw new Error('the test gateway does not expose its data dir');
  return gateway.dataDir;
}
