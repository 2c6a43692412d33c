import { pino } from 'pino';
import { type Config, loadConfig } from '../../src/config.js';
import { type Gateway, type GatewayOptions, startGateway } from '../../src/gateway.js';
import { tempDir } from './temp-dir.js';
import { onEsdbTestServer, storeSettings } from './test-store.js';

export const ADMIN_KEY = 'ak_test_admin_key_0123456789abcdef';

/** Also here for the tests that import it from this module; see ./temp-dir.ts. */
export { tempDir };

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    DATA_DIR: tempDir(),
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_API_KEY: ADMIN_KEY,
    LOG_LEVEL: 'silent',
    ...overrides,
  });
}

/**
 * A real gateway on 127.0.0.1 with a real SQLite file in a fresh directory (or its own EventStoreDB test
 * server, test/support/test-store.ts); answers are checked against their schemas.
 */
export async function startTestGateway(
  overrides: Record<string, string> = {},
  options: Pick<GatewayOptions, 'clock'> = {},
): Promise<Gateway & { api: Api; dataDir: string }> {
  const dataDir = overrides.DATA_DIR ?? tempDir();
  const config = testConfig({ ...(await storeSettings(dataDir, 'in-process')), ...overrides, DATA_DIR: dataDir });
  const gateway = await startGateway(config, {
    ...options,
    logger: pino({ level: 'silent' }),
    validateResponses: true,
  });
  if (onEsdbTestServer && gateway.store.kind !== 'eventstoredb')
    throw new Error('the esdb test project started a gateway on another store');
  return Object.assign(gateway, { api: apiClient(gateway.url), dataDir: config.dataDir });
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  admin?: boolean;
  deviceKey?: string;
  headers?: Record<string, string>;
  /** Sent as JSON unless `raw` is given. */
  json?: unknown;
  raw?: string | Uint8Array;
}

export type Api = (method: string, path: string, options?: RequestOptions) => Promise<ApiResponse>;

export function apiClient(baseUrl: string): Api {
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.admin) headers['x-admin-key'] = ADMIN_KEY;
    if (options.deviceKey) headers['x-device-key'] = options.deviceKey;
    let body: string | Uint8Array | undefined = options.raw;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    return {
      status: response.status,
      headers: response.headers,
      body: type.includes('json') && text ? JSON.parse(text) : text,
    };
  };
}
