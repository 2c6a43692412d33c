import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { loadOrCreateAdminKey } from './auth/admin-key.js';
import { Authenticator } from './auth/authenticator.js';
import type { Config } from './config.js';
import { DeviceRegistry } from './devices/device-registry.js';
import type { EventStore } from './eventstore/event-store.js';
import { openEventStore } from './eventstore/open-event-store.js';
import { createHttpApp } from './http/app.js';
import { buildOpenApiDocument } from './http/openapi.js';
import type { RouteSpec } from './http/route.js';
import { deviceRoutes } from './http/routes/devices.js';
import { docsRoutes } from './http/routes/docs.js';
import { healthRoutes } from './http/routes/health.js';
import { sessionRoutes } from './http/routes/session.js';
import { createLogger } from './logger.js';
import { DevicesReadModel } from './projections/devices-read-model.js';
import { ProjectionRunner } from './projections/projection-runner.js';
import { openReadModelDb } from './projections/read-model-db.js';
import { VERSION } from './version.js';

export interface GatewayOptions {
  logger?: Logger;
  /** Check every answer against its schema (tests). */
  validateResponses?: boolean;
}

export interface Gateway {
  url: string;
  adminKey: string;
  store: EventStore;
  projections: ProjectionRunner;
  close(): Promise<void>;
}

/** Wires the store, read models, commands and HTTP together and starts listening. */
export async function startGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const startedAt = Date.now();
  const log = options.logger ?? createLogger(config.logLevel);
  const store = await openEventStore(config);
  const readModelDb = openReadModelDb(config.dataDir);
  const devices = new DevicesReadModel(readModelDb);
  const projections = new ProjectionRunner(store, readModelDb, [devices], log);
  await projections.start();

  const adminKey = loadOrCreateAdminKey(config.adminApiKey, config.dataDir, log);
  const registry = new DeviceRegistry(store, projections, devices, config.defaultEngine);

  const routes: RouteSpec[] = [];
  const openApi = buildLazy(() =>
    buildOpenApiDocument(routes, {
      title: 'Device Messaging Gateway',
      version: VERSION,
      description: 'Self-hosted HTTP API for WhatsApp-style messaging devices. Errors are RFC 9457 problem+json with a stable `code`.',
    }),
  );
  routes.push(...healthRoutes(store, VERSION, startedAt), ...deviceRoutes({ registry, devices }), ...sessionRoutes(devices), ...docsRoutes(openApi));

  const app = createHttpApp({
    routes,
    authenticator: new Authenticator(adminKey, devices),
    logger: log,
    bodyLimitBytes: config.bodyLimitBytes,
    validateResponses: options.validateResponses,
  });
  const server = await listen(app.callback(), config.port, config.host);
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  log.info({ url, store: store.kind, dataDir: config.dataDir }, 'gateway listening');

  return {
    url,
    adminKey,
    store,
    projections,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await projections.stop();
      await store.close();
      readModelDb.close();
    },
  };
}

function buildLazy<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}

async function listen(handler: Parameters<typeof import('node:http').createServer>[1], port: number, host: string): Promise<Server> {
  const { createServer } = await import('node:http');
  const server = createServer(handler);
  // Slow or idle clients must not hold sockets forever.
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
