/**
 * The gateway's settings, read once from the environment. Every variable has a sane default, and a bad
 * value stops the start with a ConfigError that names the variable (docs/configuration.md lists them all).
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { type ClusterSettings, type Config, type ContactsSettings, ENGINES, LOG_LEVELS } from './config-types.js';
import { ConfigError, type Env, EnvReader } from './env-reader.js';

// The rest of the code imports the settings' types, and the error a bad value throws, from here.
export * from './config-types.js';
export { ConfigError } from './env-reader.js';

const DAY_MS = 86_400_000;

export function loadConfig(env: Env = process.env): Config {
  const config = readConfig(env);
  // A base delay over its maximum would be cut to the maximum without a word: refused, naming both.
  notAbove(
    'SESSION_RECONNECT_BASE_DELAY_MS',
    config.reconnect.baseDelayMs,
    'SESSION_RECONNECT_MAX_DELAY_MS',
    config.reconnect.maxDelayMs,
  );
  notAbove(
    'OUTBOX_RETRY_DELAY',
    config.outbox.retryBaseDelayMs,
    'OUTBOX_RETRY_MAX_DELAY',
    config.outbox.retryMaxDelayMs,
  );
  return config;
}

function notAbove(variable: string, value: number, limitVariable: string, limit: number): void {
  if (value > limit)
    throw new ConfigError(
      variable,
      `must not exceed ${limitVariable} (${value} > ${limit}); raise ${limitVariable} or lower ${variable}`,
    );
}

function readConfig(env: Env): Config {
  const read = new EnvReader(env);
  const cluster = readClusterSettings(read, env);
  return {
    port: read.integer('PORT', 3000, { min: 0, max: 65_535 }),
    host: read.string('HOST', '127.0.0.1'),
    adminApiKey: read.optionalString('ADMIN_API_KEY', { minLength: 16 }),
    dataDir: resolve(read.string('DATA_DIR', './data')),
    eventStoreUrl: withKnownEventStoreSettings(
      read.optionalUrl('EVENTSTORE_URL', [
        'esdb:',
        'esdb+discover:',
        'kurrentdb:',
        'kurrentdb+discover:',
        'kurrent:',
        'kurrent+discover:',
      ]),
    ),
    eventStoreLimits: {
      maxAppendBytes: read.integer('EVENTSTORE_MAX_APPEND_BYTES', 0, { min: 0, max: Number.MAX_SAFE_INTEGER }),
      maxEventBytes: read.integer('EVENTSTORE_MAX_EVENT_BYTES', 0, { min: 0, max: Number.MAX_SAFE_INTEGER }),
    },
    defaultEngine: read.oneOf('DEFAULT_ENGINE', ENGINES, 'baileys'),
    webhookAllowPrivateNetworks: read.boolean('WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    webhooks: {
      retrySchedule: read.durations('WEBHOOK_RETRY_SCHEDULE', '5s,30s,2m,10m,30m,1h,3h,6h,12h', {
        min: 0,
        max: DAY_MS,
      }),
      retryJitter: read.fraction('WEBHOOK_RETRY_JITTER', 0.2),
      timeoutMs: read.integer('WEBHOOK_TIMEOUT_MS', 10_000, { min: 100, max: 120_000 }),
      concurrency: read.integer('WEBHOOK_CONCURRENCY', 64, { min: 1, max: 10_000 }),
      hostRatePerSecond: read.integer('WEBHOOK_HOST_RATE_PER_SECOND', 1_000, { min: 1, max: 1_000_000 }),
      retentionMs: read.duration('WEBHOOK_RETENTION', '7d', { min: 60_000, max: 365 * DAY_MS }),
    },
    logLevel: read.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    metricsPublic: read.boolean('METRICS_PUBLIC', false),
    bodyLimitBytes: read.integer('BODY_LIMIT_BYTES', 1024 * 1024, { min: 1024, max: 64 * 1024 * 1024 }),
    encryptionKey: read.optionalKey('ENCRYPTION_KEY', 32),
    ...read.waWebVersion('WA_WEB_VERSION'),
    reconnect: {
      baseDelayMs: read.integer('SESSION_RECONNECT_BASE_DELAY_MS', 1_000, { min: 0, max: 3_600_000 }),
      maxDelayMs: read.integer('SESSION_RECONNECT_MAX_DELAY_MS', 60_000, { min: 0, max: DAY_MS }),
      jitter: read.fraction('SESSION_RECONNECT_JITTER', 0.2),
      maxAttempts: read.integer('SESSION_RECONNECT_MAX_ATTEMPTS', 10, { min: 1, max: 1_000_000 }),
    },
    watchdog: {
      silenceMs: read.duration('WATCHDOG_SILENCE', '30m', { min: 1_000, max: 7 * DAY_MS }),
      reboot: read.boolean('WATCHDOG_REBOOT', false),
    },
    sandbox: {
      deliveredDelayMs: read.integer('SANDBOX_DELIVERED_DELAY_MS', 500, { min: 0, max: 3_600_000 }),
      readDelayMs: read.integer('SANDBOX_READ_DELAY_MS', 1_500, { min: 0, max: 3_600_000 }),
    },
    outbox: {
      ratePerMinute: read.integer('OUTBOX_RATE_PER_MINUTE', 30, { min: 1, max: 1_000_000 }),
      spacingMaxMs: read.duration('OUTBOX_SPACING', '1s', { min: 0, max: 60_000 }),
      maxAttempts: read.integer('OUTBOX_MAX_ATTEMPTS', 5, { min: 1, max: 100 }),
      retryBaseDelayMs: read.duration('OUTBOX_RETRY_DELAY', '2s', { min: 0, max: 3_600_000 }),
      retryMaxDelayMs: read.duration('OUTBOX_RETRY_MAX_DELAY', '5m', { min: 0, max: DAY_MS }),
      ...read.optionalDuration('messageTtlMs', 'OUTBOX_MESSAGE_TTL', { min: 1_000, max: 365 * DAY_MS }),
    },
    media: {
      maxBytes: read.integer('MEDIA_MAX_BYTES', 16 * 1024 * 1024, { min: 1024, max: 2 * 1024 * 1024 * 1024 }),
      fileMaxBytes: read.integer('MEDIA_FILE_MAX_BYTES', 100 * 1024 * 1024, { min: 1024, max: 2 * 1024 * 1024 * 1024 }),
      fetchTimeoutMs: read.duration('MEDIA_FETCH_TIMEOUT', '60s', { min: 100, max: 3_600_000 }),
    },
    inboundMedia: {
      enabled: read.oneOf('INBOUND_MEDIA', ['on', 'off'] as const, 'on') === 'on',
      retentionMs: read.duration('INBOUND_MEDIA_RETENTION', '30d', { min: 1_000, max: 3650 * DAY_MS }),
    },
    idempotencyTtlMs: read.duration('IDEMPOTENCY_TTL', '24h', { min: 60_000, max: 30 * DAY_MS }),
    contacts: readContactsSettings(read),
    server: {
      maxConnections: read.integer('MAX_CONNECTIONS', 1_024, { min: 1, max: 1_000_000 }),
      maxConnectionsPerAddress: read.integer('MAX_CONNECTIONS_PER_ADDRESS', 512, { min: 1, max: 1_000_000 }),
      trustProxy: read.addresses('TRUST_PROXY'),
      unauthenticatedPerMinute: read.integer('UNAUTHENTICATED_RATE_PER_MINUTE', 120, { min: 1, max: 1_000_000 }),
      largeBodyConcurrency: read.integer('LARGE_BODY_CONCURRENCY', 16, { min: 1, max: 1_000 }),
      largeBodyQueue: read.integer('LARGE_BODY_QUEUE', 32, { min: 0, max: 100_000 }),
    },
    diskFreeMinBytes: read.integer('DISK_FREE_MIN_BYTES', 64 * 1024 * 1024, { min: 0, max: Number.MAX_SAFE_INTEGER }),
    stream: {
      heartbeatMs: read.duration('STREAM_HEARTBEAT', '15s', { min: 10, max: 3_600_000 }),
      maxBufferBytes: read.integer('STREAM_MAX_BUFFER_BYTES', 1024 * 1024, { min: 1024, max: 1024 * 1024 * 1024 }),
      flushMs: read.duration('STREAM_FLUSH_INTERVAL', '25ms', { min: 0, max: 1_000 }),
    },
    cluster,
    readThreads: readThreadCount(read, env, cluster.processes),
    outputs: {
      retryMaxDelayMs: read.duration('OUTPUT_RETRY_MAX_DELAY', '30s', { min: 100, max: 3_600_000 }),
    },
  };
}

function readClusterSettings(read: EnvReader, env: Env): ClusterSettings {
  const raw = env.GATEWAY_PROCESSES?.trim();
  const processes =
    raw === 'auto' ? Math.max(1, availableParallelism()) : read.integer('GATEWAY_PROCESSES', 1, { min: 1, max: 256 });
  // Set by the primary process for its workers (src/main.ts).
  const worker = read.integer('GATEWAY_WORKER', 0, { min: 0, max: 256 });
  return {
    processes,
    leases: processes > 1 || worker > 0 || read.boolean('GATEWAY_CLUSTER', false),
    leaseTimeoutMs: read.duration('LEASE_TIMEOUT', '10s', { min: 500, max: 600_000 }),
    worker,
  };
}

/**
 * READ_THREADS: threads that run the heavy reads (chat pages) beside each process's event loop
 * (src/storage/reader-threads.ts). `auto`: the cores left to each process after its own, at least 1, at most 4.
 */
function readThreadCount(read: EnvReader, env: Env, processes: number): number {
  if ((env.READ_THREADS?.trim() ?? 'auto') === 'auto')
    return Math.min(4, Math.max(1, Math.floor(availableParallelism() / processes) - 1));
  return read.integer('READ_THREADS', 1, { min: 0, max: 64 });
}

function readContactsSettings(read: EnvReader): ContactsSettings {
  const checkRatePerMinute = read.integer('CONTACT_CHECK_RATE_PER_MINUTE', 30, { min: 1, max: 100_000 });
  return {
    checkRatePerMinute,
    checkBurst: read.integer('CONTACT_CHECK_BURST', Math.min(10, checkRatePerMinute), {
      min: 1,
      max: checkRatePerMinute,
    }),
    checkCacheTtlMs: read.duration('CONTACT_CHECK_CACHE_TTL', '24h', { min: 1_000, max: 30 * DAY_MS }),
    avatarCacheTtlMs: read.duration('CONTACT_AVATAR_CACHE_TTL', '1h', { min: 1_000, max: 30 * DAY_MS }),
  };
}

/** The settings of an EventStoreDB connection string the client reads (it ignores case, `-` and `_`). */
const EVENT_STORE_SETTINGS = new Set(
  [
    'userCertFile',
    'userKeyFile',
    'maxDiscoverAttempts',
    'connectionName',
    'defaultDeadline',
    'discoveryInterval',
    'gossipTimeout',
    'nodePreference',
    'tls',
    'tlsVerifyCert',
    'tlsCAFile',
    'throwOnAppendFailure',
    'keepAliveInterval',
    'keepAliveTimeout',
  ].map(flatCase),
);

function flatCase(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, '');
}

/**
 * Refuses the settings the EventStoreDB client would only warn about: it prints the whole connection string
 * with the warning, password included, every time a client is made.
 */
function withKnownEventStoreSettings(url: string | undefined): string | undefined {
  const query = url?.split('?')[1];
  if (query === undefined) return url;
  for (const pair of query.split('&').filter((p) => p !== '')) {
    const [key = '', value = ''] = pair.split('=');
    const flat = flatCase(decodeURIComponent(key));
    if (!EVENT_STORE_SETTINGS.has(flat))
      throw new ConfigError('EVENTSTORE_URL', `has a setting the EventStoreDB client does not know: "${key}"`);
    if (flat === 'tlsverifycert' && value.trim() === 'false') {
      throw new ConfigError(
        'EVENTSTORE_URL',
        'tlsVerifyCert=false is not supported by the EventStoreDB client: give the CA with tlsCAFile=<path> (or NODE_EXTRA_CA_CERTS)',
      );
    }
  }
  return url;
}
