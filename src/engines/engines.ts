/**
 * The engines of this process, by name. A device names its engine when it is created; its actor asks
 * here for it.
 */
import type { Logger } from 'pino';
import { DomainError } from '../errors/domain-error.js';
import type { Config } from '../config.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { Engine, EngineName } from './engine.js';
import { SandboxEngine, type UnconfirmedSends } from './sandbox/sandbox-engine.js';
import { type LinkPreviewProvider, type PollLookup, createLazyBaileysEngine } from './baileys/index.js';
import type { DeviceSettings } from '../settings/settings-events.js';

export class EngineUnavailableError extends DomainError {
  constructor(readonly engine: string) {
    super('engine_unavailable', `the ${engine} engine is not available in this gateway`);
  }
}

export class Engines {
  private readonly byName: ReadonlyMap<string, Engine>;

  constructor(
    engines: readonly Engine[],
    /** The simulated network, for the /sandbox routes. */
    readonly sandbox: SandboxEngine,
  ) {
    this.byName = new Map(engines.map((engine) => [engine.name, engine]));
  }

  get(name: EngineName): Engine {
    const engine = this.byName.get(name);
    if (!engine) throw new EngineUnavailableError(name);
    return engine;
  }

  async close(): Promise<void> {
    await Promise.all([...this.byName.values()].map(async (engine) => engine.close?.()));
  }
}

export interface EngineDependencies {
  store: EventStore;
  config: Config;
  log: Logger;
  /** Open Graph previews of `link` messages, fetched through the outbound network guard (the outbox's). */
  linkPreview?: LinkPreviewProvider;
  /** The sandbox's sent messages still owed receipts (the outbox read model's). */
  unconfirmedSends?: UnconfirmedSends;
  /** Polls a device sent or received, to decrypt their votes. */
  polls?: PollLookup;
  /** Each device's settings (proxy, call rejection): the settings read model's. */
  deviceSettings?: (deviceId: string) => DeviceSettings;
}

export function createEngines({
  store,
  config,
  log,
  linkPreview,
  unconfirmedSends,
  polls,
  deviceSettings,
}: EngineDependencies): Engines {
  const sandbox = new SandboxEngine(store, {
    deliveredDelayMs: config.sandbox.deliveredDelayMs,
    readDelayMs: config.sandbox.readDelayMs,
    ...(unconfirmedSends ? { unconfirmedSends } : {}),
    ...(deviceSettings ? { deviceSettings } : {}),
  });
  const engines: Engine[] = [sandbox];
  engines.push(
    createLazyBaileysEngine({
      store,
      encryptionKey: config.encryptionKey,
      logger: log,
      ...(linkPreview ? { linkPreview } : {}),
      ...(polls ? { polls } : {}),
      ...(config.waWebVersion ? { version: config.waWebVersion } : {}),
      ...(deviceSettings ? { deviceSettings } : {}),
      allowPrivateNetworks: config.webhookAllowPrivateNetworks,
    }),
  );
  return new Engines(engines, sandbox);
}
