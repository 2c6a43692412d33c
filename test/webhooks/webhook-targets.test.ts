/**
 * The webhooks read model's webhooks (src/webhooks/webhook-targets.ts) on a real SQLite file: a global webhook
 * takes only the devices it lists, each change says which scope it changed (the machine projector tells the
 * workers), and a scope's cached webhooks stay until it changes or is forgotten.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { WebhookTargets } from '../../src/webhooks/webhook-targets.js';
import { setupWebhookTables } from '../../src/webhooks/webhooks-schema.js';
import { tempDir } from '../support/temp-dir.js';

const AT = '2026-01-01T08:00:00.000Z';
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

describe('webhook targets', () => {
  let db: Database.Database | undefined;
  afterEach(() => db?.close());

  function open() {
    db = new Database(join(tempDir('dmg-webhook-targets-'), 'read-models.sqlite'));
    setupWebhookTables(db);
    const targets = new WebhookTargets(db);
    const changed: string[] = [];
    targets.onChanged = (scope) => changed.push(scope);
    return { targets, changed, db };
  }

  it("takes a global webhook's devices as listed, and every device when it lists none", () => {
    const { targets, changed } = open();
    const config = { url: 'https://example.com/in', events: ['*'], secret: SECRET };
    targets.configure('_global', 'gwh_some', { ...config, devices: ['d1', 'd2'] }, AT);
    targets.configure('_global', 'gwh_all', config, AT);
    targets.configure('d1', 'default', config, AT);
    expect(changed).toEqual(['_global', '_global', 'd1']);
    expect(targets.target('d2', 'gwh_some')?.devices).toEqual(['d1', 'd2']);
    expect(targets.target('d3', 'gwh_some')).toBeUndefined();
    expect(targets.target('d3', 'gwh_all')?.webhookId).toBe('gwh_all');
    expect(targets.target('d1', 'default')?.deviceId).toBe('d1');
    expect(targets.target('d2', 'default')).toBeUndefined();
    // The view answers show has no trace of the set kept for the lookups.
    expect(Object.keys(targets.webhook('_global', 'gwh_some')!)).not.toContain('covered');
  });

  it('keeps a scope cached until it changes here or is forgotten (another process changed it)', () => {
    const { targets, changed, db } = open();
    targets.configure('_global', 'gwh_1', { url: 'https://example.com/a', events: ['*'], secret: SECRET }, AT);
    expect(targets.countOf('_global')).toBe(1);
    // The projector's write, as a worker sees it: the cache holds until told.
    db.prepare("DELETE FROM webhook_targets WHERE scope = '_global'").run();
    expect(targets.countOf('_global')).toBe(1);
    targets.forget('_global');
    expect(targets.countOf('_global')).toBe(0);
    // forget() is a worker's: it tells no one.
    expect(changed).toEqual(['_global']);
    targets.configure('d1', 'wh_1', { url: 'https://example.com/b', events: ['*'], secret: SECRET }, AT);
    targets.remove('d1', 'wh_1');
    targets.removeScope('d2');
    expect(changed).toEqual(['_global', 'd1', 'd1', 'd2']);
    expect(targets.countOf('d1')).toBe(0);
  });
});
