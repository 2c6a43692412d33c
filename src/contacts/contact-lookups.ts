/**
 * Number checks and avatar lookups through a device's live connection: answered from the cache while
 * fresh, otherwise asked of the engine (within the device's allowance of fresh lookups, shared by both)
 * and cached. Concurrent requests for the same answer share one lookup.
 */
import type Database from 'better-sqlite3';
import type { ContactsSettings } from '../config.js';
import { DomainError, sessionNotOnline } from '../errors/domain-error.js';
import { domainErrorOfEngine } from '../engines/engine-failure.js';
import type { EngineConnection } from '../engines/engine.js';
import { jidOfNumber } from './contact-text.js';
import { LookupCache, type LookupKind } from './lookup-cache.js';
import { LookupRateLimit } from './lookup-rate-limit.js';

export interface CheckAnswer {
  number: string;
  exists: boolean;
  jid?: string;
}

export interface AvatarAnswer {
  number: string;
  url: string | null;
}

/** The live connections of online devices (the Supervisor). */
export interface LiveConnections {
  connection(deviceId: string): EngineConnection | undefined;
  /** The session's state as this process knows it, for the words of a refusal. */
  state?(deviceId: string): string | undefined;
}

export interface AboutAnswer {
  number: string;
  about: string | null;
}

export interface LookupSettings {
  checkTtlMs: number;
  avatarTtlMs: number;
}

export interface ContactLookupsDeps {
  connections: LiveConnections;
  cache: LookupCache;
  checkLimit: LookupRateLimit;
  settings: LookupSettings;
}

export class ContactLookups {
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: ContactLookupsDeps) {}

  check(deviceId: string, number: string): Promise<CheckAnswer> {
    return this.lookUp(deviceId, 'check', number, this.deps.settings.checkTtlMs, async (connection) => {
      await this.deps.checkLimit.take(deviceId);
      const found = await connection.checkNumber(number);
      return found.exists ? { number, exists: true, jid: found.jid ?? jidOfNumber(number) } : { number, exists: false };
    });
  }

  avatar(deviceId: string, number: string): Promise<AvatarAnswer> {
    // Avatar lookups ask the network about a number as checks do: they draw on the same allowance.
    return this.lookUp(deviceId, 'avatar', number, this.deps.settings.avatarTtlMs, async (connection) => {
      await this.deps.checkLimit.take(deviceId);
      return { number, url: await connection.avatarUrl(number) };
    });
  }

  /** The number's about text: cached like avatars (CONTACT_AVATAR_CACHE_TTL), drawing on the same allowance. */
  about(deviceId: string, number: string): Promise<AboutAnswer> {
    return this.lookUp(deviceId, 'about', number, this.deps.settings.avatarTtlMs, async (connection) => {
      if (!connection.profileOps) throw new DomainError('engine_error', 'this engine cannot read about texts');
      await this.deps.checkLimit.take(deviceId);
      return { number, about: await connection.profileOps.about(number) };
    });
  }

  private async lookUp<T>(
    deviceId: string,
    kind: LookupKind,
    number: string,
    ttlMs: number,
    ask: (connection: EngineConnection) => Promise<T>,
  ): Promise<T> {
    // Online first, as the contract says, also for answers that are cached.
    const connection = this.deps.connections.connection(deviceId);
    if (!connection) throw sessionNotOnline(this.deps.connections.state?.(deviceId));
    const cached = this.deps.cache.get<T>(deviceId, kind, number);
    if (cached !== undefined) return cached;
    const key = `${deviceId}/${kind}/${number}`;
    const pending = this.inFlight.get(key) as Promise<T> | undefined;
    if (pending) return pending;
    const fresh: Promise<T> = ask(connection)
      .catch((error: unknown) => {
        throw domainErrorOfEngine(error, this.deps.connections.state?.(deviceId));
      })
      .then((answer) => {
        this.deps.cache.put(deviceId, kind, number, answer, ttlMs);
        return answer;
      })
      .finally(() => {
        if (this.inFlight.get(key) === fresh) this.inFlight.delete(key);
      });
    this.inFlight.set(key, fresh);
    return fresh;
  }
}

/** Lookups with their cache in the read-model database and the configured allowance of fresh checks. */
export function createContactLookups(
  readModelDb: Database.Database,
  connections: LiveConnections,
  settings: ContactsSettings,
): ContactLookups {
  return new ContactLookups({
    connections,
    cache: new LookupCache(readModelDb),
    checkLimit: new LookupRateLimit({ perMinute: settings.checkRatePerMinute, burst: settings.checkBurst }),
    settings: { checkTtlMs: settings.checkCacheTtlMs, avatarTtlMs: settings.avatarCacheTtlMs },
  });
}
