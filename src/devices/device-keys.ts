/**
 * Scoped device keys (docs/api-guide.md, "Scoped keys"): made and deleted through the device's registry
 * stream (device-decider.ts), read from the keys read model. A key is shown once, in the answer that makes it,
 * and recorded only as its SHA-256. A deleted key stops at once: the answer waits for the read models (which
 * the authenticator reads), and the live streams end on the event itself (src/stream/event-stream-hub.ts).
 */
import { randomUUID } from 'node:crypto';
import { type Caller, PRIMARY_KEY_ID } from '../auth/authenticator.js';
import { generateDeviceKey, hashKey } from '../auth/keys.js';
import { SCOPES, type Scope } from '../auth/scopes.js';
import { DomainError } from '../errors/domain-error.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import { deviceStream } from './device-events.js';
import type { DeviceKeysReadModel } from './device-keys-read-model.js';
import type { DeviceCommands } from './device-registry.js';

export interface ScopedKeyListing {
  keyId: string;
  name: string;
  scopes: Scope[];
  createdAt: string;
  lastUsedAt: string | null;
}

export class DeviceKeys {
  constructor(
    private readonly commands: DeviceCommands,
    private readonly projections: ReadModelProgress,
    private readonly keys: DeviceKeysReadModel,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * `caller` makes the key: a scoped key gives no scope it lacks itself (a `manage` key could otherwise make
   * itself a `send` key); the admin key and the key made with the device hold every scope.
   */
  async create(
    deviceId: string,
    input: { name: string; scopes: readonly Scope[] },
    caller: Caller | undefined,
  ): Promise<Omit<ScopedKeyListing, 'lastUsedAt'> & { key: string }> {
    refuseEscalation(caller, input.scopes);
    const key = generateDeviceKey();
    const keyId = `key_${randomUUID()}`;
    // In the catalogue's order, each once.
    const scopes = SCOPES.filter((scope) => input.scopes.includes(scope));
    const at = new Date(this.now()).toISOString();
    const { position } = await this.commands.handle(deviceStream(deviceId), {
      type: 'CreateKey',
      deviceId,
      keyId,
      name: input.name,
      scopes,
      keyHash: hashKey(key),
      at,
    });
    await this.projections.settle(position);
    return { keyId, key, name: input.name, scopes, createdAt: at };
  }

  list(deviceId: string): ScopedKeyListing[] {
    return this.keys
      .list(deviceId)
      .map(({ keyId, name, scopes, createdAt, lastUsedAt }) => ({ keyId, name, scopes, createdAt, lastUsedAt }));
  }

  async delete(deviceId: string, keyId: string): Promise<void> {
    const { position } = await this.commands.handle(deviceStream(deviceId), {
      type: 'DeleteKey',
      deviceId,
      keyId,
      at: new Date(this.now()).toISOString(),
    });
    await this.projections.settle(position);
  }
}

/** `403 insufficient_scope` naming the first scope asked for that a scoped caller lacks. */
function refuseEscalation(caller: Caller | undefined, asked: readonly Scope[]): void {
  if (caller?.kind !== 'device' || caller.keyId === PRIMARY_KEY_ID) return;
  const lacking = SCOPES.find((scope) => asked.includes(scope) && !caller.scopes.includes(scope));
  if (lacking === undefined) return;
  throw new DomainError('insufficient_scope', `this key lacks the "${lacking}" scope it would give the new key`, {
    reason: lacking,
  });
}
