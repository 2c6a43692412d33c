import type { Context } from 'koa';
import { DomainError } from '../errors/domain-error.js';
import { hashKey, sameHash } from './keys.js';

/** What the authenticator needs to know of device keys (the devices read model answers). */
export interface DeviceKeyDirectory {
  keyHashOf(deviceId: string): string | undefined;
  isDeviceKeyHash(keyHash: string): boolean;
}

const unauthorized = () => new DomainError('unauthorized', 'a valid API key is required');
const forbidden = () => new DomainError('forbidden', 'this key may not use this route');

/** `keyHash`: the device key the request authenticated with (a live stream ends when that key is rotated out). */
export type Caller = { kind: 'admin' } | { kind: 'device'; deviceId: string; keyHash: string };

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
  ) {
    this.adminKeyHash = hashKey(adminKey);
  }

  admin(ctx: Context): Caller {
    const presented = presentedKeys(ctx).map(hashKey);
    if (presented.some((hash) => sameHash(hash, this.adminKeyHash))) return { kind: 'admin' };
    if (presented.some((hash) => this.devices.isDeviceKeyHash(hash))) throw forbidden();
    throw unauthorized();
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
      return { kind: 'device', deviceId, keyHash: expected };
    throw unauthorized();
  }

  private knows(keyHash: string): boolean {
    return sameHash(keyHash, this.adminKeyHash) || this.devices.isDeviceKeyHash(keyHash);
  }
}

/** X-Admin-Key, X-Device-Key and a Bearer token; any of them may carry either kind of key. */
function presentedKeys(ctx: Context): string[] {
  const keys: string[] = [];
  const admin = ctx.get('x-admin-key');
  const device = ctx.get('x-device-key');
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'))?.[1];
  if (admin) keys.push(admin);
  if (device) keys.push(device);
  if (bearer) keys.push(bearer);
  return keys;
}
