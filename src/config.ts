/**
 * The gateway's settings, read once from the environment. Every variable has a sane default, and a bad
 * value stops the start with a ConfigError that names the variable (README lists them all).
 */
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import ms from 'ms';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const ENGINES = ['baileys', 'sandbox'] as const;

export type Engine = (typeof ENGINES)[number];
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  port: number;
  host: string;
  /** Unset: generated on first start and kept in DATA_DIR/admin.key. */
  adminApiKey: string | undefined;
  dataDir: string;
  /** Unset: the embedded SQLite event store in DATA_DIR. */
  eventStoreUrl: string | undefined;
  defaultEngine: Engine;
  webhookAllowPrivateNetworks: boolean;
  webhooks: WebhookSettings;
  logLevel: LogLevel;
  /** GET /metrics without the admin key. */
  metricsPublic: boolean;
  /** Largest accepted JSON request body, in bytes. */
  bodyLimitBytes: number;
  /** ENCRYPTION_KEY: 32 bytes; Baileys credentials are encrypted at rest (AES-256-GCM) when set. */
  encryptionKey: Buffer | undefined;
  /** WA_WEB_VERSION: the WhatsApp Web version the Baileys engine announces; unset: the one Baileys pins. */
  waWebVersion?: WaWebVersion;
  /** How a session reconnects after an unexpected loss (README, Settings). */
  reconnect: ReconnectSettings;
  /** The simulated network of `sandbox` devices. */
  sandbox: SandboxSettings;
  /** Sending: the outbox's pace and retries (README, Settings). */
  outbox: OutboxSettings;
  /** Media sends: size limits and fetching of `url` media. */
  media: MediaSettings;
  /** Received media: downloaded when the message arrives (INBOUND_MEDIA=on) and kept this long. */
  inboundMedia: { enabled: boolean; retentionMs: number };
  /** How long an Idempotency-Key answers with the first response. */
  idempotencyTtlMs: number;
  /** Contact number checks and avatar lookups: caching and the per-device allowance of fresh checks. */
  contacts: ContactsSettings;
  /** Limits of the HTTP server against floods (README, Settings). */
  server: ServerLimits;
  /** Below this many free bytes in DATA_DIR, /health reports `degraded`. */
  diskFreeMinBytes: number;
  /** The live event stream (GET /stream, GET /devices/:id/stream). */
  stream: StreamSettings;
  /** Several processes on one store (README, "Several processes"). */
  cluster: ClusterSettings;
}

export interface ClusterSettings {
  /** GATEWAY_PROCESSES: processes started on this machine (node:cluster, one port); `auto`: one per core. */
  processes: number;
  /**
   * Devices are run under leases (membership, fencing): on with several processes here, or GATEWAY_CLUSTER=true
   * for several machines on one EventStoreDB. Off (one process per store), a device runs where the gateway runs.
   */
  leases: boolean;
  /** LEASE_TIMEOUT: a process not seen heartbeating for this long loses its devices to the others. */
  leaseTimeoutMs: number;
  /** The worker's number (1..processes) under GATEWAY_PROCESSES; 0 for a lone process. */
  worker: number;
}

export interface StreamSettings {
  /** A comment line this often on every open stream. */
  heartbeatMs: number;
  /** A client with more unsent bytes than this is disconnected (it resumes by id). */
  maxBufferBytes: number;
  /** Writes to live clients leave at most this often (ms). */
  flushMs: number;
}

export interface ServerLimits {
  /** Open connections at once; beyond it, the address holding the most gives one up for a newcomer from another. */
  maxConnections: number;
  /** Open connections from one address (an IPv6 /64) at once; more are closed at once. Trusted proxies are exempt. */
  maxConnectionsPerAddress: number;
  /**
   * TRUST_PROXY: addresses and CIDR ranges of reverse proxies whose X-Forwarded-For names the client (the
   * right-most hop that is not itself trusted); empty: the socket's address is the client.
   */
  trustProxy: string[];
  /** Requests per minute from one address that fail authentication (401) before it gets 429. */
  unauthenticatedPerMinute: number;
  /** Large request bodies (media sends) parsed at once; more wait in a queue. */
  largeBodyConcurrency: number;
  /** Large request bodies waiting for their turn; more are answered 503 with Retry-After. */
  largeBodyQueue: number;
}

export interface ContactsSettings {
  /** Fresh number checks per device in a minute. */
  checkRatePerMinute: number;
  /** Of those, at most this many back to back (1..checkRatePerMinute). */
  checkBurst: number;
  /** How long a check's answer is reused. */
  checkCacheTtlMs: number;
  /** How long an avatar lookup's answer is reused. */
  avatarCacheTtlMs: number;
}

/** A WhatsApp Web version (major, minor, revision), or `latest`: asked of web.whatsapp.com when connecting. */
export type WaWebVersion = [number, number, number] | 'latest';

export interface OutboxSettings {
  /** Sends (and revokes) started per device in any 60 s window. */
  ratePerMinute: number;
  /** Before each send, a random pause of up to this long, so that a burst does not look like spam. */
  spacingMaxMs: number;
  /** Tries of one message (first send included) before it is `failed`. */
  maxAttempts: number;
  /** Delay before the first retry; each further retry doubles it (±20 % jitter). */
  retryBaseDelayMs: number;
  /** No retry delay is longer. */
  retryMaxDelayMs: number;
  /** A queued message not sent within this long is `expired` (undefined: never); a send's `expiresAt` wins. */
  messageTtlMs?: number;
}

export interface MediaSettings {
  /** Largest image, audio or video, in bytes. */
  maxBytes: number;
  /** Largest file (document), in bytes. */
  fileMaxBytes: number;
  /** Whole download of a `url` media at send time. */
  fetchTimeoutMs: number;
}

export interface ReconnectSettings {
  /** Nominal delay before the first retry; each further retry doubles it. */
  baseDelayMs: number;
  /** No delay is longer. */
  maxDelayMs: number;
  /** Each delay is moved randomly by up to ± this fraction of it. */
  jitter: number;
  /** Tries before the session is `failed` with `too_many_attempts`. */
  maxAttempts: number;
}

export interface SandboxSettings {
  /** A sent message is `delivered` this long after it was sent. */
  deliveredDelayMs: number;
  /** And `read` this long after it was delivered. */
  readDelayMs: number;
}

/** Webhook delivery (README, Settings). */
export interface WebhookSettings {
  /** Delay before each retry, in ms: a delivery gets 1 + length attempts. */
  retrySchedule: number[];
  /** Each delay is moved randomly by up to ± this fraction of it. */
  retryJitter: number;
  /** Whole request, per attempt. */
  timeoutMs: number;
  /** Attempts in flight at once, over all devices. */
  concurrency: number;
  /** Attempts started per second towards one destination host (host:port). */
  hostRatePerSecond: number;
  /** Finished delivery records older than this leave the log. */
  retentionMs: number;
}

const DAY_MS = 86_400_000;

/**
 * "250ms", "5s", "2m", "1h", "7d" (and the longer forms `ms` reads, such as "1.5h" or "2 days") →
 * milliseconds; undefined when it is not a duration. A unit is required: a bare number is refused rather
 * than read as milliseconds ("24" is more likely meant as hours). Only a bare 0 is taken: it is 0 in any unit.
 */
function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '0') return 0;
  if (!/[a-z]$/i.test(trimmed)) return undefined;
  const value = ms(trimmed as ms.StringValue) as number | undefined;
  return value !== undefined && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
  }
}

type Env = Record<string, string | undefined>;

/** `10.1.2.3`, `::1`, `10.0.0.0/8` or `fd00::/8`, written plainly (no `127.1` or hexadecimal forms). */
function isAddressOrRange(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

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
      maxConnectionsPerAddress: read.integer('MAX_CONNECTIONS_PER_ADDRESS', 128, { min: 1, max: 1_000_000 }),
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
    cluster: readClusterSettings(read, env),
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

/**
 * A URL as errors may show it: everything between `://` (or the start) and the last `@` is hidden, since a
 * password may itself hold `/`, `?`, `:` or `@` (typed unencoded); a URL without `@` has nothing to hide.
 */
function withoutCredentials(value: string): string {
  const at = value.lastIndexOf('@');
  if (at < 0) return value;
  const scheme = value.indexOf('://');
  const start = scheme >= 0 && scheme < at ? scheme + 3 : 0;
  return `${value.slice(0, start)}***${value.slice(at)}`;
}

/** Reads and checks single variables; an empty value counts as unset. */
class EnvReader {
  constructor(private readonly env: Env) {}

  private raw(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === '' ? undefined : value;
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  optionalString(name: string, rule: { minLength: number }): string | undefined {
    const value = this.raw(name);
    if (value !== undefined && value.length < rule.minLength) {
      throw new ConfigError(name, `must be at least ${rule.minLength} characters long`);
    }
    return value;
  }

  /** A secret key of exactly `bytes` bytes, as hex (2 × bytes characters) or base64; never echoed in errors. */
  optionalKey(name: string, bytes: number): Buffer | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    const hex = new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`);
    if (hex.test(value)) return Buffer.from(value, 'hex');
    if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) {
      const key = Buffer.from(value, 'base64');
      if (key.length === bytes) return key;
    }
    throw new ConfigError(
      name,
      `must be ${bytes} bytes written as ${bytes * 2} hex characters or as base64 (e.g. openssl rand -base64 ${bytes})`,
    );
  }

  integer(name: string, fallback: number, range: { min: number; max: number }): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^-?\d+$/.test(value)) throw new ConfigError(name, `must be an integer, got "${value}"`);
    const n = Number(value);
    if (n < range.min || n > range.max)
      throw new ConfigError(name, `must be between ${range.min} and ${range.max}, got ${n}`);
    return n;
  }

  /** A duration such as 500ms, 5s, 2m, 1h or 7d, in milliseconds. */
  duration(name: string, fallback: string, range: { min: number; max: number }): number {
    const value = this.raw(name) ?? fallback;
    const ms = parseDuration(value);
    if (ms === undefined)
      throw new ConfigError(name, `must be a duration such as 500ms, 5s, 2m, 1h or 7d, got "${value}"`);
    if (ms < range.min || ms > range.max)
      throw new ConfigError(name, `must be between ${range.min} ms and ${range.max} ms, got "${value}"`);
    return ms;
  }

  /** `2.3000.1023223821` (three numbers) or `latest`; nothing when unset. */
  waWebVersion(name: string): { waWebVersion?: WaWebVersion } {
    const value = this.raw(name);
    if (value === undefined) return {};
    if (value.toLowerCase() === 'latest') return { waWebVersion: 'latest' };
    const match = /^(\d{1,6})[.,](\d{1,6})[.,](\d{1,12})$/.exec(value);
    if (!match)
      throw new ConfigError(
        name,
        `must be a WhatsApp Web version such as 2.3000.1023223821, or latest, got "${value}"`,
      );
    return { waWebVersion: [Number(match[1]), Number(match[2]), Number(match[3])] };
  }

  /** A duration, or nothing when unset or `none`: the property to spread. */
  optionalDuration<K extends string>(key: K, name: string, range: { min: number; max: number }): { [P in K]?: number } {
    const value = this.raw(name);
    if (value === undefined || value.toLowerCase() === 'none') return {};
    return { [key]: this.duration(name, value, range) } as { [P in K]?: number };
  }

  /** A comma-separated list of durations ("5s,30s,2m"), in milliseconds; "none" is the empty list. */
  durations(name: string, fallback: string, range: { min: number; max: number }): number[] {
    const value = this.raw(name) ?? fallback;
    if (value.toLowerCase() === 'none') return [];
    return value.split(',').map((part) => {
      const ms = parseDuration(part);
      if (ms === undefined)
        throw new ConfigError(
          name,
          `must be durations such as 5s,30s,2m,1h separated by commas (or none), got "${value}"`,
        );
      if (ms < range.min || ms > range.max)
        throw new ConfigError(
          name,
          `each duration must be between ${range.min} ms and ${range.max} ms, got "${part.trim()}"`,
        );
      return ms;
    });
  }

  /** A comma-separated list of IP addresses and CIDR ranges (`10.0.0.0/8`); unset or `none`: the empty list. */
  addresses(name: string): string[] {
    const value = this.raw(name);
    if (value === undefined || value.toLowerCase() === 'none') return [];
    return value.split(',').map((part) => {
      const entry = part.trim();
      if (!isAddressOrRange(entry))
        throw new ConfigError(
          name,
          `must be IP addresses or CIDR ranges separated by commas (e.g. 127.0.0.1,10.0.0.0/8), or none, got "${entry}"`,
        );
      return entry;
    });
  }

  /** A number from 0 to 1. */
  fraction(name: string, fallback: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    const n = /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
    if (!(n >= 0 && n <= 1)) throw new ConfigError(name, `must be a number from 0 to 1, got "${value}"`);
    return n;
  }

  boolean(name: string, fallback: boolean): boolean {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['true', '1', 'yes', 'on'].includes(value)) return true;
    if (['false', '0', 'no', 'off'].includes(value)) return false;
    throw new ConfigError(name, `must be true or false, got "${value}"`);
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(value)) {
      throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${value}"`);
    }
    return value as T;
  }

  /**
   * An EventStoreDB / KurrentDB connection string: `scheme://[user:pass@]host[:port][,host[:port]…][/][?settings]`.
   * Not `new URL()`, which refuses cluster lists (`esdb://a:2113,b:2113`); errors never echo the credentials.
   */
  optionalUrl(name: string, protocols: readonly string[]): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    const shown = withoutCredentials(value);
    // An unencoded / ? or @ in a password is the likely cause of a refused URL with credentials.
    const encodingHint = value.includes('@')
      ? ' (a / ? or @ in the user name or password is written percent-encoded: %2F %3F %40)'
      : '';
    const match = /^([a-z][a-z0-9+.-]*:)\/\/(?:[^@/?]*@)?([^/?]*)\/?(?:\?.*)?$/i.exec(value.trim());
    if (!match) throw new ConfigError(name, `must be a URL, got "${shown}"${encodingHint}`);
    if (!protocols.includes(match[1]!.toLowerCase())) {
      throw new ConfigError(name, `must start with one of ${protocols.map((p) => `${p}//`).join(', ')}`);
    }
    const host = /^(?:\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::\d{1,5})?$/i;
    if (!match[2]!.split(',').every((endpoint) => host.test(endpoint))) {
      throw new ConfigError(
        name,
        `must name one host or a comma-separated list of host:port, got "${shown}"${encodingHint}`,
      );
    }
    return value;
  }
}
