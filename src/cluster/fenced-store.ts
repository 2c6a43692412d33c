/**
 * A device's owned streams written under its lease (docs/architecture.md, "Several processes"): every
 * append and snapshot write carries the lease revision this process holds as its fence. Without a lease
 * (lost, released) the write is refused before it reaches the store; a write the store refuses because
 * the lease moved is reported, and the owner stops acting for the device.
 */
import { DelegatingEventStore } from '../eventstore/delegating-store.js';
import {
  type AppendOptions,
  type AppendResult,
  type EventStore,
  type Fence,
  FenceRejectedError,
  type NewEvent,
  type Snapshot,
} from '../eventstore/event-store.js';

export interface FenceSource {
  /** The fence of a device this process holds; undefined when it does not hold it. */
  fence(deviceId: string): Fence | undefined;
  /** A write under the device's fence was refused: the lease is gone. */
  fenceRejected(deviceId: string, error: FenceRejectedError): void;
}

/** Every write goes under the fence of one device (the device actor's view of the store). */
export class DeviceFencedStore extends DelegatingEventStore {
  constructor(
    inner: EventStore,
    private readonly deviceId: string,
    private readonly leases: FenceSource,
  ) {
    super(inner);
  }

  private current(): Fence {
    const fence = this.leases.fence(this.deviceId);
    if (!fence) throw new FenceRejectedError({ streamId: `lease-${this.deviceId}`, revision: -2 }, -1);
    return fence;
  }

  private async fenced<T>(write: (fence: Fence) => Promise<T>): Promise<T> {
    const fence = this.current();
    try {
      return await write(fence);
    } catch (error) {
      if (error instanceof FenceRejectedError) this.leases.fenceRejected(this.deviceId, error);
      throw error;
    }
  }

  override append(streamId: string, events: readonly NewEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    return this.fenced((fence) => this.inner.append(streamId, events, { ...options, fence }));
  }

  override saveSnapshot(streamId: string, snapshot: Snapshot): Promise<void> {
    return this.fenced((fence) => this.inner.saveSnapshot(streamId, snapshot, { fence }));
  }

  override deleteSnapshot(streamId: string): Promise<void> {
    return this.fenced((fence) => this.inner.deleteSnapshot(streamId, { fence }));
  }
}

/**
 * A device's streams written by whichever process holds them: `deviceOf` names the device of a stream
 * (undefined: not a device's, written as it is). `strict` (credentials: only the owner connects a device)
 * refuses a write without the lease; otherwise a write without the lease is a command from a process that
 * does not run the device (e.g. a webhook retry asked over HTTP) and goes unfenced under its expected
 * revision, while the owner's writes carry the fence.
 */
export class StreamFencedStore extends DelegatingEventStore {
  constructor(
    inner: EventStore,
    private readonly leases: FenceSource,
    private readonly deviceOf: (streamId: string) => string | undefined,
    private readonly strict: boolean,
  ) {
    super(inner);
  }

  /** The device whose fence this write goes under, if any. */
  private fencedDevice(streamId: string): string | undefined {
    const deviceId = this.deviceOf(streamId);
    if (deviceId === undefined) return undefined;
    return this.strict || this.leases.fence(deviceId) ? deviceId : undefined;
  }

  override append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    const deviceId = this.fencedDevice(streamId);
    if (deviceId === undefined) return this.inner.append(streamId, events, options);
    return new DeviceFencedStore(this.inner, deviceId, this.leases).append(streamId, events, options);
  }

  override saveSnapshot(streamId: string, snapshot: Snapshot): Promise<void> {
    const deviceId = this.fencedDevice(streamId);
    if (deviceId === undefined) return this.inner.saveSnapshot(streamId, snapshot);
    return new DeviceFencedStore(this.inner, deviceId, this.leases).saveSnapshot(streamId, snapshot);
  }

  override deleteSnapshot(streamId: string): Promise<void> {
    const deviceId = this.fencedDevice(streamId);
    if (deviceId === undefined) return this.inner.deleteSnapshot(streamId);
    return new DeviceFencedStore(this.inner, deviceId, this.leases).deleteSnapshot(streamId);
  }
}

/** Where the engines keep a device's credentials (Baileys' auth records, the sandbox's credentials). */
const CREDENTIAL_PREFIXES = ['baileys-auth-', 'sandbox-credentials-'];

export function credentialDeviceOf(streamId: string): string | undefined {
  for (const prefix of CREDENTIAL_PREFIXES) {
    if (!streamId.startsWith(prefix)) continue;
    const rest = streamId.slice(prefix.length);
    const slash = rest.indexOf('/');
    return slash < 0 ? rest : rest.slice(0, slash);
  }
  return undefined;
}

/** A device's stream named `<prefix><deviceId>`. */
export function deviceOfStream(prefix: string): (streamId: string) => string | undefined {
  return (streamId) => (streamId.startsWith(prefix) ? streamId.slice(prefix.length) : undefined);
}
