/**
 * What a sandbox device keeps once its code was scanned: the account it is linked to. Kept in the event
 * store's snapshot slot of a per-device key (not a stream: nothing to audit, and it must be wipeable),
 * so it survives restarts and works the same with SQLite and EventStoreDB.
 */
import type { EventStore } from '../../eventstore/event-store.js';

export interface SandboxCredentials {
  phone: string;
  linkedAt: string;
  /** Scanned by a WhatsApp Business phone: the account has labels. */
  business?: true;
  /** The phone unlinked the device while it was not connected: its next connection is told so. */
  revoked?: true;
}

const keyOf = (deviceId: string) => `sandbox-credentials-${deviceId}`;

export class SandboxCredentialStore {
  constructor(private readonly store: EventStore) {}

  async load(deviceId: string): Promise<SandboxCredentials | undefined> {
    const snapshot = await this.store.loadSnapshot<SandboxCredentials | null>(keyOf(deviceId));
    return snapshot?.state ?? undefined;
  }

  async save(deviceId: string, credentials: SandboxCredentials): Promise<void> {
    await this.store.saveSnapshot(keyOf(deviceId), { revision: 0, state: credentials });
  }

  async wipe(deviceId: string): Promise<void> {
    await this.store.deleteSnapshot(keyOf(deviceId));
  }
}
