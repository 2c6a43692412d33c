/**
 * The `baileys` engine: WhatsApp Web multi-device through Baileys 7. One socket per connected device,
 * its auth state (creds + Signal keys) kept in the configured event store (see auth/), encrypted when
 * an ENCRYPTION_KEY is configured.
 *
 * Nothing is fetched online besides WhatsApp itself: the WhatsApp Web version is the one this Baileys
 * release pins (unless WA_WEB_VERSION names one, or `latest`, which asks web.whatsapp.com at connect
 * time), history sync is off, and link previews come only from the preview hook.
 */
import makeWASocket, {
  DEFAULT_CONNECTION_CONFIG,
  type UserFacingSocketConfig,
  type WABrowserDescription,
  type WAVersion,
  fetchLatestWaWebVersion,
  makeCacheableSignalKeyStore,
} from 'baileys';
import { type LevelWithSilent, type Logger, pino } from 'pino';
import type { EventStore } from '../../eventstore/event-store.js';
import { type Engine, type EngineConnection, EngineError, type EngineEvents } from '../engine.js';
import { AuthRecordError, AuthRecords } from './auth/auth-records.js';
import { loadStoreAuthState, wipeStoreAuthState } from './auth/store-auth-state.js';
import { ValueCipher } from '../../secrets/value-cipher.js';
import { BaileysConnection, type ConnectionSettings } from './baileys-connection.js';
import { type Clock, systemClock } from '../../time/clock.js';
import type { MediaDownloader, PollLookup } from './baileys-inbound.js';
import type { BaileysSocket, SocketFactory } from './baileys-socket.js';
import { historySyncOptions } from './history.js';
import { type LinkPreviewProvider, withPollContextInfo } from './outgoing-content.js';
import type { DeviceSettings } from '../../settings/settings-events.js';
import { proxyAgentOf, proxyDispatcherOf } from './proxy-agent.js';

export interface BaileysEngineOptions {
  store: EventStore;
  /** ENCRYPTION_KEY (32 bytes): auth records are sealed with AES-256-GCM; unset: stored as plain JSON. */
  encryptionKey?: Uint8Array;
  /** The gateway's logger; Baileys gets a child of it at `baileysLogLevel`. */
  logger?: Logger;
  /** Baileys is chatty (every stanza at debug, routine events at info). Default 'error'. */
  baileysLogLevel?: LevelWithSilent;
  /** WhatsApp's WebSocket endpoint; tests and benchmarks point it at a local server. Default: WhatsApp. */
  socketUrl?: string | URL;
  /**
   * The WhatsApp Web version announced (WA_WEB_VERSION); default: the one this Baileys release pins, never
   * fetched online. `latest`: asked of web.whatsapp.com when connecting (kept an hour), the pinned one if that fails.
   */
  version?: WAVersion | 'latest';
  /** How `latest` is looked up (tests); default: Baileys' fetchLatestWaWebVersion with a 10 s timeout. */
  latestVersion?: () => Promise<WAVersion>;
  browser?: WABrowserDescription;
  /** Ping interval; a connection silent for longer than this plus keepAliveGraceMs is reported lost. Default 25 s. */
  keepAliveIntervalMs?: number;
  keepAliveGraceMs?: number;
  connectTimeoutMs?: number;
  /** Lifetime of each QR code (WhatsApp hands out a handful per connection attempt). Default 20 s. */
  qrTimeoutMs?: number;
  /** Timeout of queries such as checkNumber and avatarUrl. Default 20 s. */
  queryTimeoutMs?: number;
  /**
   * Look a number up (onWhatsApp) before the first send to it, so a number that is not on WhatsApp fails
   * at once and permanently instead of the message sitting undelivered forever. Default true.
   */
  verifyRecipients?: boolean;
  /** Open Graph previews for `link` messages (the outbox fills this in); none: links are sent without preview. */
  linkPreview?: LinkPreviewProvider;
  /** Replaces makeWASocket (tests drive the engine with a fake socket). */
  makeSocket?: SocketFactory;
  /** Polls the device sent or received, to decrypt their votes (the gateway's message index). */
  polls?: PollLookup;
  /** Replaces Baileys' media download (tests). */
  downloadMedia?: MediaDownloader;
  /** Each device's settings (its proxy, whether calls are rejected), read when it connects and when a call rings. */
  deviceSettings?: (deviceId: string) => DeviceSettings;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: a device's proxy may be at a private address (the outbound guard's rule). Default false. */
  allowPrivateNetworks?: boolean;
  /** Times the keepalive watchdog and the pairing code's renewal (tests move it on); default the system clock. */
  clock?: Clock;
}

const DEFAULTS = {
  baileysLogLevel: 'error',
  keepAliveIntervalMs: 25_000,
  keepAliveGraceMs: 10_000,
  connectTimeoutMs: 20_000,
  qrTimeoutMs: 20_000,
  queryTimeoutMs: 20_000,
  closeTimeoutMs: 5_000,
} as const;

const LATEST_VERSION_TTL_MS = 60 * 60_000;

/** Baileys' lookup of the current WhatsApp Web version; its failure is a thrown error, not a silent fallback. */
async function lookUpLatestVersion(): Promise<WAVersion> {
  const found = await fetchLatestWaWebVersion({ signal: AbortSignal.timeout(10_000) });
  if (found.error !== undefined || !found.isLatest)
    throw new Error(`lookup failed: ${String((found.error as Error | undefined)?.message ?? found.error)}`);
  return found.version;
}

/** The real socket satisfies the engine's narrow view of it (checked here, at compile time). */
const makeBaileysSocket: SocketFactory = (config) => makeWASocket(config) satisfies BaileysSocket;

/** A child's own level would override its parent's: never let Baileys be louder than the gateway's LOG_LEVEL. */
function quieterLevel(parent: Logger, wanted: LevelWithSilent): LevelWithSilent {
  const value = (level: string) => (level === 'silent' ? Number.POSITIVE_INFINITY : (parent.levels.values[level] ?? 0));
  return value(parent.level) > value(wanted) ? (parent.level as LevelWithSilent) : wanted;
}

export function createBaileysEngine(options: BaileysEngineOptions): BaileysEngine {
  return new BaileysEngine(options);
}

export class BaileysEngine implements Engine {
  readonly name = 'baileys' as const;
  private readonly cipher: ValueCipher | undefined;
  private readonly logger: Logger;
  private readonly settings: ConnectionSettings;
  /** The current connection of each device: a device never has two sockets at once (they would replace each other). */
  private readonly live = new Map<string, BaileysConnection>();
  /** WA_WEB_VERSION=latest: the version looked up, and when. */
  private latest: { version: WAVersion; at: number } | undefined;

  constructor(private readonly options: BaileysEngineOptions) {
    this.cipher = options.encryptionKey ? new ValueCipher(options.encryptionKey) : undefined;
    this.logger = (options.logger ?? pino({ level: 'silent' })).child({ engine: 'baileys' });
    this.settings = {
      keepAliveIntervalMs: options.keepAliveIntervalMs ?? DEFAULTS.keepAliveIntervalMs,
      keepAliveGraceMs: options.keepAliveGraceMs ?? DEFAULTS.keepAliveGraceMs,
      qrTimeoutMs: options.qrTimeoutMs ?? DEFAULTS.qrTimeoutMs,
      verifyRecipients: options.verifyRecipients ?? true,
      closeTimeoutMs: DEFAULTS.closeTimeoutMs,
      ...(options.linkPreview ? { linkPreview: options.linkPreview } : {}),
      ...(options.polls ? { polls: options.polls } : {}),
      ...(options.downloadMedia ? { downloadMedia: options.downloadMedia } : {}),
    };
  }

  /** Live sockets (for metrics and benchmarks). */
  get connectionCount(): number {
    return this.live.size;
  }

  async connect(deviceId: string, events: EngineEvents): Promise<EngineConnection> {
    await this.retire(deviceId);
    const records = this.recordsOf(deviceId);
    let auth;
    try {
      auth = await loadStoreAuthState(records);
    } catch (error) {
      const message = `the stored credentials of ${deviceId} cannot be read: ${(error as Error).message}`;
      // Retrying cannot help when they are encrypted with another key (or none is set), or damaged; it can when the store was away.
      if (error instanceof AuthRecordError) throw new EngineError('credentials_unreadable', message, true);
      throw new EngineError('engine_error', message);
    }
    const logger = this.logger.child({ deviceId });
    const baileysLogger = logger.child(
      { lib: 'baileys' },
      { level: quieterLevel(logger, this.options.baileysLogLevel ?? DEFAULTS.baileysLogLevel) },
    );
    const version = await this.versionToAnnounce(logger);
    // A changed proxy takes effect here, at the next (re)connect.
    const proxy = this.options.deviceSettings?.(deviceId).proxy ?? null;
    const guard = { allowPrivateNetworks: this.options.allowPrivateNetworks ?? false };
    const agent = proxy ? proxyAgentOf(proxy, guard) : undefined;
    const mediaDispatcher = proxy ? proxyDispatcherOf(proxy, guard) : undefined;
    const socket = (this.options.makeSocket ?? makeBaileysSocket)({
      ...this.socketConfig(auth.state, baileysLogger, version),
      // Read at each (re)connect, as the proxy is: a changed setting applies from the next link or reconnect.
      ...historySyncOptions(this.options.deviceSettings?.(deviceId).historySync),
      ...(agent ? { agent, fetchAgent: agent } : {}),
    });
    const connection: BaileysConnection = new BaileysConnection({
      deviceId,
      ...(proxy ? { proxyUrl: proxy.url, mediaDispatcher } : {}),
      settingsOf: () => this.options.deviceSettings?.(deviceId),
      socket,
      auth,
      events,
      settings: this.settings,
      logger,
      clock: this.options.clock ?? systemClock,
      wipeCredentials: () => wipeStoreAuthState(records),
      // Until then a reconnect of the device waits for this connection (see retire).
      onFinished: () => {
        if (this.live.get(deviceId) === connection) this.live.delete(deviceId);
        void mediaDispatcher?.close().catch(() => undefined);
      },
    });
    this.live.set(deviceId, connection);
    return connection;
  }

  async forget(deviceId: string): Promise<void> {
    await this.retire(deviceId);
    await wipeStoreAuthState(this.recordsOf(deviceId));
  }

  async close(): Promise<void> {
    await Promise.all([...this.live.keys()].map((deviceId) => this.retire(deviceId)));
  }

  /**
   * Closes the device's previous connection, if any, and waits until its credential writes have landed:
   * after a QR scan the pairing creds must be stored before the next connect reads them.
   */
  private async retire(deviceId: string): Promise<void> {
    const previous = this.live.get(deviceId);
    if (!previous) return;
    await previous
      .close()
      .catch((error: unknown) => this.logger.warn({ err: error, deviceId }, 'closing the previous connection failed'));
    if (this.live.get(deviceId) === previous) this.live.delete(deviceId);
  }

  private recordsOf(deviceId: string): AuthRecords {
    return new AuthRecords(this.options.store, deviceId, this.cipher);
  }

  /** WA_WEB_VERSION as set; `latest` looked up (an hour's cache), falling back to the pinned version. */
  private async versionToAnnounce(logger: Logger): Promise<WAVersion> {
    const wanted = this.options.version;
    if (wanted === undefined) return DEFAULT_CONNECTION_CONFIG.version;
    if (wanted !== 'latest') return wanted;
    if (this.latest && Date.now() - this.latest.at < LATEST_VERSION_TTL_MS) return this.latest.version;
    try {
      const version = await (this.options.latestVersion ?? lookUpLatestVersion)();
      this.latest = { version, at: Date.now() };
      return version;
    } catch (error) {
      logger.warn(
        { err: error },
        'WA_WEB_VERSION=latest: the current WhatsApp Web version could not be looked up; announcing the pinned one',
      );
      return DEFAULT_CONNECTION_CONFIG.version;
    }
  }

  private socketConfig(
    state: UserFacingSocketConfig['auth'],
    logger: Logger,
    version: WAVersion,
  ): UserFacingSocketConfig {
    const o = this.options;
    return {
      auth: { creds: state.creds, keys: makeCacheableSignalKeyStore(state.keys, logger) },
      version,
      ...(o.socketUrl ? { waWebSocketUrl: o.socketUrl } : {}),
      ...(o.browser ? { browser: o.browser } : {}),
      logger,
      connectTimeoutMs: o.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
      keepAliveIntervalMs: this.settings.keepAliveIntervalMs,
      defaultQueryTimeoutMs: o.queryTimeoutMs ?? DEFAULTS.queryTimeoutMs,
      qrTimeout: this.settings.qrTimeoutMs,
      // History sync as the device's setting says (historySyncOptions, at connect); no presence broadcast, no
      // previews fetched by Baileys.
      markOnlineOnConnect: false,
      generateHighQualityLinkPreview: false,
      patchMessageBeforeSending: (message) => withPollContextInfo(message),
    };
  }
}
