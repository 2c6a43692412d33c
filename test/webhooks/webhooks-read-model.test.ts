/**
 * The webhook deliveries read model (src/webhooks/webhooks-read-model.ts), fed events directly: what a
 * removed hook, a narrowed one and a retry that came after the removal leave behind.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/eventstore/event-store.js';
import { WebhooksReadModel } from '../../src/webhooks/webhooks-read-model.js';
import { HookSecrets } from '../../src/webhooks/hook-secrets.js';
import { UPCASTERS } from '../../src/event-schemas.js';
import { tempDir } from '../support/temp-dir.js';

/** A read model in memory, and a way to feed it events in log order. */
function fedModel() {
  const db = new Database(':memory:');
  const model = new WebhooksReadModel(db);
  model.setup(db);
  let position = 0;
  const apply = (type: string, data: Record<string, unknown>) => {
    const event: StoredEvent = {
      id: `e${++position}`,
      streamId: 'device-d1',
      revision: position - 1,
      position,
      type,
      data,
      metadata: {},
      createdAt: new Date(),
    };
    model.apply(event);
    return event;
  };
  return { db, model, apply };
}

const now = () => new Date().toISOString();
const received = (waMessageId: string) => ({
  deviceId: 'd1',
  from: '4915100000001',
  type: 'text',
  body: 'private',
  timestamp: 1,
  waMessageId,
});
const sessionOnline = {
  deviceId: 'd1',
  state: 'online',
  previousState: 'connecting',
  phone: '4915100000002',
  reason: 'scanned',
};

describe('webhook deliveries read model', () => {
  it('keeps a delivery cancelled by a removed hook failed when an attempt in flight is recorded later', () => {
    const { db, model, apply } = fedModel();
    apply('HooksConfigured', {
      deviceId: 'd1',
      url: 'https://old.example/hook',
      events: ['*'],
      secret: 'whsec_AAAA',
      at: now(),
    });
    const message = apply('MessageReceived', {
      deviceId: 'd1',
      from: '4915100000001',
      type: 'text',
      body: 'private',
      timestamp: 1,
      waMessageId: 'W1',
    });
    expect(model.pendingHeads('d1', 10).map((d) => d.id)).toEqual([message.id]);
    // Removed while an attempt is under way; the attempt ends later and asks for a retry.
    apply('HooksRemoved', { deviceId: 'd1' });
    apply('WebhookDeliveryAttempted', {
      deviceId: 'd1',
      deliveryId: message.id,
      round: 0,
      attempt: 1,
      outcome: 'retrying',
      status: 500,
      durationMs: 1,
      attemptedAt: now(),
      nextAttemptAt: now(),
    });
    expect(model.delivery('d1', message.id)).toMatchObject({ status: 'failed', attempts: 1 });
    expect(model.devicesWithPending()).toEqual([]);
    // A hook configured later gets nothing of the old one's deliveries.
    apply('HooksConfigured', {
      deviceId: 'd1',
      url: 'https://new.example/hook',
      events: ['session.state'],
      secret: 'whsec_BBBB',
      at: now(),
    });
    expect(model.pendingHeads('d1', 10)).toEqual([]);
    db.close();
  });

  it("ends the pending deliveries of a kind dropped from the hook's events, and only those", () => {
    const { db, model, apply } = fedModel();
    apply('HooksConfigured', {
      deviceId: 'd1',
      url: 'https://a.example/hook',
      events: ['message.received', 'session.state'],
      secret: 'whsec_AAAA',
      at: now(),
    });
    const message = apply('MessageReceived', received('W1'));
    const session = apply('SessionStateChanged', sessionOnline);
    expect(model.pendingHeads('d1', 10).map((d) => d.id)).toEqual([message.id, session.id]);
    apply('HooksConfigured', {
      deviceId: 'd1',
      url: 'https://a.example/hook',
      events: ['session.state'],
      secret: 'whsec_AAAA',
      at: now(),
    });
    expect(model.delivery('d1', message.id)).toMatchObject({
      status: 'failed',
      lastError: expect.stringContaining('dropped'),
    });
    expect(model.pendingHeads('d1', 10).map((d) => d.id)).toEqual([session.id]);
    // `*` keeps every kind.
    const later = apply('MessageReceived', received('W2'));
    apply('HooksConfigured', {
      deviceId: 'd1',
      url: 'https://a.example/hook',
      events: ['*'],
      secret: 'whsec_AAAA',
      at: now(),
    });
    expect(model.pendingHeads('d1', 10).map((d) => d.id)).toEqual([session.id]);
    expect(model.delivery('d1', later.id)).toBeUndefined();
    db.close();
  });

  it('takes no retry requested after the hook was removed (or its kind dropped): nothing goes pending for a later hook', () => {
    const { db, model, apply } = fedModel();
    apply('HooksConfigured', {
      deviceId: 'd1',
      url: 'https://a.example/hook',
      events: ['message.received'],
      secret: 'whsec_AAAA',
      at: now(),
    });
    const message = apply('MessageReceived', received('W1'));
    // Asked through a read model that had not yet applied the removal: in the log the retry comes after it.
    apply('HooksRemoved', { deviceId: 'd1' });
    apply('WebhookDeliveryRetryRequested', { deviceId: 'd1', deliveryId: message.id });
    expect(model.delivery('d1', message.id)).toMatchObject({ status: 'failed' });
    apply('HooksConfigured', {
      deviceId: 'd1',
      url: 'https://b.example/hook',
      events: ['session.state'],
      secret: 'whsec_BBBB',
      at: now(),
    });
    apply('WebhookDeliveryRetryRequested', { deviceId: 'd1', deliveryId: message.id });
    expect(model.delivery('d1', message.id)).toMatchObject({ status: 'failed' });
    expect(model.devicesWithPending()).toEqual([]);
    // A hook that lists the kind again takes a retry.
    apply('HooksConfigured', {
      deviceId: 'd1',
      url: 'https://b.example/hook',
      events: ['message.received'],
      secret: 'whsec_BBBB',
      at: now(),
    });
    apply('WebhookDeliveryRetryRequested', { deviceId: 'd1', deliveryId: message.id });
    expect(model.delivery('d1', message.id)).toMatchObject({ status: 'pending' });
    db.close();
  });

  it('with a key, keeps a URL recorded with credentials in clear sealed, masked in its url; opens it to send', () => {
    const db = new Database(':memory:');
    const model = new WebhooksReadModel(db, new HookSecrets(randomBytes(32)));
    model.setup(db);
    const clearUrl = 'https://user:clear-pass@hooks.example/in?token=clear-token';
    model.apply({
      id: 'e1',
      streamId: 'device-d1',
      revision: 0,
      position: 1,
      type: 'HooksConfigured',
      data: { deviceId: 'd1', url: clearUrl, events: ['*'], secret: 'whsec_AAAA', at: now() },
      metadata: {},
      createdAt: new Date(),
    });
    const row = db.prepare('SELECT url, sealed_url FROM webhook_targets').get() as { url: string; sealed_url: string };
    expect(row.url).toBe('https://***:***@hooks.example/in?token=***');
    expect(row.sealed_url).toMatch(/^sealed:v1:/);
    expect(JSON.stringify(row)).not.toContain('clear-');
    expect(model.hook('d1')?.url).toBe(clearUrl);
    db.close();
  });

  it('reads a version-1 HooksConfigured (no `at`, its URL in clear) through the upcasters, and seals its URL', () => {
    const db = new Database(':memory:');
    const model = new WebhooksReadModel(db, new HookSecrets(randomBytes(32)));
    model.setup(db);
    const createdAt = new Date('2024-01-02T03:04:05.000Z');
    const clearUrl = 'https://user:v1-pass@hooks.example/in?api_key=v1-key';
    model.apply(
      UPCASTERS.upcast({
        id: 'e1',
        streamId: 'device-d1',
        revision: 0,
        position: 1,
        type: 'HooksConfigured',
        data: { deviceId: 'd1', url: clearUrl, events: ['*'], secret: 'whsec_AAAA' },
        metadata: {},
        createdAt,
      }),
    );
    expect(model.hook('d1')).toMatchObject({ url: clearUrl, updatedAt: createdAt.toISOString() });
    expect(JSON.stringify(db.prepare('SELECT * FROM webhook_targets').all())).not.toContain('v1-');
    db.close();
  });

  it('overwrites the hooks it resets: URLs the version before kept in clear leave the file', () => {
    const path = join(tempDir(), 'read-models.sqlite');
    const tokens = Array.from({ length: 200 }, (_, i) => `clear-token-${i}-${randomBytes(4).toString('hex')}`);
    const before = new Database(path);
    const unkeyed = new WebhooksReadModel(before);
    unkeyed.setup(before);
    before.transaction(() =>
      tokens.forEach((token, i) =>
        unkeyed.apply({
          id: `e${i}`,
          streamId: `device-d${i}`,
          revision: 0,
          position: i + 1,
          type: 'HooksConfigured',
          data: {
            deviceId: `d${i}`,
            url: `https://h.example/?token=${token}`,
            events: ['*'],
            secret: 'whsec_A',
            at: now(),
          },
          metadata: {},
          createdAt: new Date(),
        }),
      ),
    )();
    before.close();
    expect(readFileSync(path).includes(tokens[0])).toBe(true);
    const db = new Database(path);
    const keyed = new WebhooksReadModel(db, new HookSecrets(randomBytes(32)));
    keyed.setup(db);
    keyed.reset(db);
    db.close();
    const bytes = readFileSync(path);
    expect(tokens.filter((token) => bytes.includes(token))).toEqual([]);
  });

  it('drops the tables of version 4 (one hook per device), whose rows the log rebuilds as the webhook `default`', () => {
    const db = new Database(':memory:');
    db.exec(`
      CREATE TABLE webhook_hooks (device_id TEXT PRIMARY KEY, url TEXT NOT NULL, sealed_url TEXT, events TEXT NOT NULL,
        secret TEXT NOT NULL, updated_at TEXT NOT NULL) WITHOUT ROWID;
      INSERT INTO webhook_hooks VALUES ('d1', 'https://user:pw@hooks.example/in', NULL, '["*"]', 'whsec_x', 'now');
      CREATE TABLE webhook_deliveries (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, device_id TEXT NOT NULL,
        event TEXT NOT NULL, payload TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at INTEGER NOT NULL);
    `);
    const model = new WebhooksReadModel(db);
    model.setup(db);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    expect(tables).toEqual(['webhook_deliveries', 'webhook_targets']);
    const columns = db.prepare("SELECT name FROM pragma_table_info('webhook_deliveries')").pluck().all();
    expect(columns).toContain('webhook_id');
    model.setup(db); // and a second start keeps them
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all()).toEqual(
      tables,
    );
    db.close();
  });
});
