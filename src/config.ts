/**
 * The gateway's settings, read once from the environment. Every variable has a sane default, and a bad
 * value stops the start with a ConfigError that names the variable (README lists them all).
 */
import { resolve } from 'node:path';

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
  logLevel: LogLevel;
  /** Largest accepted JSON request body, in bytes. */
  bodyLimitBytes: number;
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

export function loadConfig(env: Env = process.env): Config {
  const read = new EnvReader(env);
  return {
    port: read.integer('PORT', 3000, { min: 0, max: 65_535 }),
    host: read.string('HOST', '127.0.0.1'),
    adminApiKey: read.optionalString('ADMIN_API_KEY', { minLength: 16 }),
    dataDir: resolve(read.string('DATA_DIR', './data')),
    eventStoreUrl: read.optionalUrl('EVENTSTORE_URL', ['esdb:', 'esdb+discover:', 'kurrentdb:', 'kurrentdb+discover:', 'kurrent:', 'kurrent+discover:']),
    defaultEngine: read.oneOf('DEFAULT_ENGINE', ENGINES, 'baileys'),
    webhookAllowPrivateNetworks: read.boolean('WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    logLevel: read.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    bodyLimitBytes: read.integer('BODY_LIMIT_BYTES', 1024 * 1024, { min: 1024, max: 64 * 1024 * 1024 }),
  };
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

  integer(name: string, fallback: number, range: { min: number; max: number }): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^-?\d+$/.test(value)) throw new ConfigError(name, `must be an integer, got "${value}"`);
    const n = Number(value);
    if (n < range.min || n > range.max) throw new ConfigError(name, `must be between ${range.min} and ${range.max}, got ${n}`);
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

  optionalUrl(name: string, protocols: readonly string[]): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new ConfigError(name, `must be a URL, got "${value}"`);
    }
    if (!protocols.includes(url.protocol)) {
      throw new ConfigError(name, `must start with one of ${protocols.map((p) => `${p}//`).join(', ')}`);
    }
    return value;
  }
}
