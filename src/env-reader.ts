/**
 * Reading single environment variables: each is checked, and a bad value throws a ConfigError that names the
 * variable (src/config.ts reads the gateway's settings with it).
 */
import { isIP } from 'node:net';
import ms from 'ms';
import type { WaWebVersion } from './config-types.js';

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

export type Env = Record<string, string | undefined>;

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
export class EnvReader {
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
    if (!protocols.includes(match[1].toLowerCase())) {
      throw new ConfigError(name, `must start with one of ${protocols.map((p) => `${p}//`).join(', ')}`);
    }
    const host = /^(?:\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::\d{1,5})?$/i;
    if (!match[2].split(',').every((endpoint) => host.test(endpoint))) {
      throw new ConfigError(
        name,
        `must name one host or a comma-separated list of host:port, got "${shown}"${encodingHint}`,
      );
    }
    return value;
  }
}

/** `10.1.2.3`, `::1`, `10.0.0.0/8` or `fd00::/8`, written plainly (no `127.1` or hexadecimal forms). */
function isAddressOrRange(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}
