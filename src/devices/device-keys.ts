/**
 * Scoped device keys (docs/api-guide.md, "Scoped keys"): made and deleted through the device's registry
 * stream (device-decider.ts), read from the keys read model. A key is shown once, in the answer that makes it,
 * and recorded only as its SHA-256. A deleted key stops at once: the answer waits for the read models (which
 * the authenticator reads), and the live streams end on the event itself (src/stream/event-stream-hub.ts).
 */
import { randomUUID } from 'node:crypto';
import { generateDeviceKey, hashKey } from '../auth/keys.js';
import { SCOPES, type Scope } from '../auth/scopes.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import { deviceStream } from './device-events.js';
import type { DeviceKeysReadModel } from './device-keys-read-model.js';
import type { DeviceCommandHandler } from './device-registry.js';

export interface ScopedKeyListing {
  keyId: string;
  name: string;
  scopes: Scope[];
  createdAt: string;
  lastUsedAt: string | null;
}

export class DeviceKeys {
  constructor(
    private readonly commands: DeviceCommandHandler,
    private readonly projections: ReadModelProgress,
    private readonly keys: DeviceKeysReadModel,
    private readonly now: () => number = Date.now,
  ) {}

  async create(
    deviceId: string,
    input: { name: string; scopes: readonly Scope[] },
  ): Promise<Omit<ScopedKeyListing, 'lastUsedAt'> & { key: string }> {
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
