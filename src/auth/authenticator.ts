import type { Context } from 'koa';
import { DomainError } from '../errors/domain-error.js';
import { hashKey, sameHash } from './keys.js';
import { ALL_SCOPES, type Scope } from './scopes.js';

/** What the authenticator needs to know of device keys (the devices read model answers). */
export interface DeviceKeyDirectory {
  keyHashOf(deviceId: string): string | undefined;
  isDeviceKeyHash(keyHash: string): boolean;
  /** The device whose key (the one made with it) has this hash. */
  deviceOfKeyHash?(keyHash: string): string | undefined;
}

/** Scoped keys (src/auth/device-keys-read-model.ts answers). */
export interface ScopedKeyDirectory {
  byHash(keyHash: string): { deviceId: string; keyId: string; scopes: readonly Scope[] } | undefined;
  /** Told of each successful use of a device key (for `lastUsedAt`); must not throw. */
  noteUse?(keyHash: string, now: number): void;
}

/** The keyId of the key made with the device (which holds every scope). */
export const PRIMARY_KEY_ID = 'primary';

const unauthorized = () => new DomainError('unauthorized', 'a valid API key is required');
const forbidden = () => new DomainError('forbidden', 'this key may not use this route');

/**
 * `keyHash`: the device key the request authenticated with (a live stream ends when that key is rotated out or
 * deleted); `keyId`: `primary` for the key made with the device, else the scoped key's id; `scopes`: what it may do.
 */
export type Caller =
  { kind: 'admin' } | { kind: 'device'; deviceId: string; keyHash: string; keyId: string; scopes: readonly Scope[] };

const NO_SCOPED_KEYS: ScopedKeyDirectory = { byHash: () => undefined };

/**
 * The rules of README.md, "Which key for what": admin routes take the admin key (a valid device key there is 403);
 * device routes take the admin key or that device's own key. Anything else is 401, and a device key never
 * tells whether another device exists.
 */
export class Authenticator {
  private readonly adminKeyHash: string;

  constructor(
    adminKey: string,
    private readonly devices: DeviceKeyDirectory,
    private readonly scopedKeys: ScopedKeyDirectory = NO_SCOPED_KEYS,
    private readonly now: () => number = Date.now,
  ) {
    this.adminKeyHash = hashKey(adminKey);
  }

  admin(ctx: Context): Caller {
    const presented = presentedKeys(ctx).map(hashKey);
    if (presented.some((hash) => sameHash(hash, this.adminKeyHash))) return { kind: 'admin' };
    if (presented.some((hash) => this.isAnyDeviceKey(hash))) throw forbidden();
    throw unauthorized();
  }

  /** The admin key, or any device's key (its own device's caller): routes that act for whoever calls (stream tickets). */
  anyKey(ctx: Context): Caller {
    const presented = presentedKeys(ctx).map(hashKey);
    if (presented.some((hash) => sameHash(hash, this.adminKeyHash))) return { kind: 'admin' };
    for (const hash of presented) {
      const deviceId = this.devices.deviceOfKeyHash?.(hash);
      if (deviceId !== undefined)
        return this.used({ kind: 'device', deviceId, keyHash: hash, keyId: PRIMARY_KEY_ID, scopes: ALL_SCOPES });
      const scoped = this.scopedKeys.byHash(hash);
      if (scoped)
        return this.used({
          kind: 'device',
          deviceId: scoped.deviceId,
          keyHash: hash,
          keyId: scoped.keyId,
          scopes: scoped.scopes,
        });
    }
    throw unauthorized();
  }

  /**
   * Whether a caller authenticated earlier (a stream ticket's) still holds: the admin key always; a device key
   * while it is still that device's (not rotated out or deleted, nor its device).
   */
  stillValid(caller: Caller): boolean {
    if (caller.kind === 'admin') return true;
    if (caller.keyId === PRIMARY_KEY_ID) {
      const current = this.devices.keyHashOf(caller.deviceId);
      return current !== undefined && sameHash(current, caller.keyHash);
    }
    return this.scopedKeys.byHash(caller.keyHash)?.deviceId === caller.deviceId;
  }

  /**
   * For a public route that shows more to the admin (/health): no key or only device keys is the public
   * (undefined), the admin key is the admin, and a key the gateway does not know is 401 like anywhere else,
   * so the route is no way to guess the admin key past the limit of failed authentications.
   */
  optionalAdmin(ctx: Context): Caller | undefined {
    const presented = presentedKeys(ctx).map(hashKey);
    if (presented.some((hash) => !this.knows(hash))) throw unauthorized();
    return presented.some((hash) => sameHash(hash, this.adminKeyHash)) ? { kind: 'admin' } : undefined;
  }

  /** Whether the request carries any key this gateway knows (the admin key or any device's). */
  knowsAnyKey(ctx: Context): boolean {
    return presentedKeys(ctx)
      .map(hashKey)
      .some((hash) => this.knows(hash));
  }

  /** Whether the request carries a key this gateway does not know: a guess, whatever valid key sits beside it. */
  presentsUnknownKey(ctx: Context): boolean {
    return presentedKeys(ctx)
      .map(hashKey)
      .some((hash) => !this.knows(hash));
  }

  device(ctx: Context, deviceId: string): Caller {
    const presented = presentedKeys(ctx).map(hashKey);
    if (presented.some((hash) => sameHash(hash, this.adminKeyHash))) return { kind: 'admin' };
    const expected = this.devices.keyHashOf(deviceId);
    if (expected !== undefined && presented.some((hash) => sameHash(hash, expected)))
      return this.used({ kind: 'device', deviceId, keyHash: expected, keyId: PRIMARY_KEY_ID, scopes: ALL_SCOPES });
    for (const hash of presented) {
      const scoped = this.scopedKeys.byHash(hash);
      if (scoped?.deviceId === deviceId)
        return this.used({ kind: 'device', deviceId, keyHash: hash, keyId: scoped.keyId, scopes: scoped.scopes });
    }
    throw unauthorized();
  }

  private used(caller: Caller & { kind: 'device' }): Caller {
    try {
      this.scopedKeys.noteUse?.(caller.keyHash, this.now());
    } catch {
      // When a key was last used is worth no failed request.
    }
    return caller;
  }

  private isAnyDeviceKey(keyHash: string): boolean {
    return this.devices.isDeviceKeyHash(keyHash) || this.scopedKeys.byHash(keyHash) !== undefined;
  }

  private knows(keyHash: string): boolean {
    return sameHash(keyHash, this.adminKeyHash) || this.isAnyDeviceKey(keyHash);
  }
}

/** Whether a caller may use a route that needs `scope` (the admin key may use any). */
export const hasScope = (caller: Caller | undefined, scope: Scope): boolean =>
  caller?.kind !== 'device' || caller.scopes.includes(scope);

/** X-Admin-Key, X-Device-Key and a Bearer token; any of them may carry either kind of key. */
function presentedKeys(ctx: Pick<Context, 'get'>): string[] {
  const keys: string[] = [];
  const admin = ctx.get('x-admin-key');
  const device = ctx.get('x-device-key');
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'))?.[1];
  if (admin) keys.push(admin);
  if (device) keys.push(device);
  if (bearer) keys.push(bearer);
  return keys;
}
