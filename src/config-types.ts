/**
 * The gateway's settings as the code sees them (src/config.ts reads them from the environment; docs/configuration.md
 * lists the variables).
 */
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
  /** The EventStoreDB / KurrentDB server's size limits, in bytes, checked before an append is sent (0: the server's only). */
  eventStoreLimits: { maxAppendBytes: number; maxEventBytes: number };
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
  /** How a session reconnects after an unexpected loss (docs/configuration.md, "Sessions and engines"). */
  reconnect: ReconnectSettings;
  /** The session watchdog: how long an online session may hear nothing while it sends (docs/configuration.md). */
  watchdog: { silenceMs: number; reboot: boolean };
  /** The simulated network of `sandbox` devices. */
  sandbox: SandboxSettings;
  /** Sending: the outbox's pace and retries (docs/configuration.md, "Sending (the outbox) and media"). */
  outbox: OutboxSettings;
  /** Media sends: size limits and fetching of `url` media. */
  media: MediaSettings;
  /** Received media: downloaded when the message arrives (INBOUND_MEDIA=on) and kept this long. */
  inboundMedia: { enabled: boolean; retentionMs: number };
  /** How long an Idempotency-Key answers with the first response. */
  idempotencyTtlMs: number;
  /** Contact number checks and avatar lookups: caching and the per-device allowance of fresh checks. */
  contacts: ContactsSettings;
  /** Limits of the HTTP server against floods (docs/configuration.md, "HTTP limits"). */
  server: ServerLimits;
  /** Below this many free bytes in DATA_DIR, /health reports `degraded`. */
  diskFreeMinBytes: number;
  /** The live event stream (GET /stream, GET /devices/:id/stream). */
  stream: StreamSettings;
  /** Several processes on one store (docs/configuration.md and docs/operations.md, "Several processes"). */
  cluster: ClusterSettings;
  /** READ_THREADS: threads of each process that run chat pages off its event loop (0: none). */
  readThreads: number;
  /** Broker outputs (POST /outputs): the longest pause between tries while a broker fails. */
  outputs: { retryMaxDelayMs: number };
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

/** Webhook delivery (docs/configuration.md, "Webhooks"). */
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
