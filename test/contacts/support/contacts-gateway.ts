/**
 * A real gateway for the contacts tests (its DATA_DIR known, so that a restart reuses it and the read
 * model's table can be read), and helpers to read contacts over HTTP.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { type Gateway, type GatewayOptions, startGateway } from '../../../src/gateway.js';
import { READ_MODEL_FILE } from '../../../src/projections/read-model-db.js';
import { type Api, apiClient, testConfig } from '../../support/gateway.js';
import { tempDir } from '../../support/temp-dir.js';

export type ContactsGateway = Gateway & { api: Api; dataDir: string };

export async function startContactsGateway(
  options: { env?: Record<string, string>; dataDir?: string; gateway?: GatewayOptions } = {},
): Promise<ContactsGateway> {
  const dataDir = options.dataDir ?? tempDir('dmg-contacts-');
  const config = testConfig({ ...options.env, DATA_DIR: dataDir });
  const gateway = await startGateway(config, {
    logger: pino({ level: 'silent' }),
    validateResponses: true,
    ...options.gateway,
  });
  return Object.assign(gateway, { api: apiClient(gateway.url), dataDir });
}

export interface ContactItem {
  number: string;
  jid: string;
  name?: string;
  pushName?: string;
}

/** Every page of GET /contacts, following nextCursor; also answers how many pages it took. */
export async function listAll(
  api: Api,
  deviceId: string,
  key: string,
  options: { q?: string; limit?: number } = {},
): Promise<{ items: ContactItem[]; pages: number }> {
  const items: ContactItem[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query = new URLSearchParams({ limit: String(options.limit ?? 500) });
    if (options.q !== undefined) query.set('q', options.q);
    if (cursor !== null) query.set('cursor', cursor);
    const page = await api('GET', `/devices/${deviceId}/contacts?${query}`, { deviceKey: key });
    if (page.status !== 200)
      throw new Error(`list contacts of ${deviceId}: ${page.status} ${JSON.stringify(page.body)}`);
    items.push(...page.body.items);
    cursor = page.body.nextCursor;
    pages++;
  } while (cursor !== null);
  return { items, pages };
}

/** The contacts read model's tables as they are on disk (a second, read-only connection). */
export function contactTables(dataDir: string): { contacts: unknown[]; deleted: unknown[] } {
  const db = new Database(join(dataDir, READ_MODEL_FILE), { readonly: true });
  try {
    return {
      contacts: db.prepare('SELECT * FROM contacts ORDER BY device_id, number').all(),
      deleted: db.prepare('SELECT * FROM contacts_deleted_devices ORDER BY device_id').all(),
    };
  } finally {
    db.close();
  }
}
