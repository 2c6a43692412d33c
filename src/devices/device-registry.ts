import { randomUUID } from 'node:crypto';
import { generateDeviceKey, hashKey } from '../auth/keys.js';
import type { Engine } from '../config.js';
import { type EventStore, type NewEvent, WrongExpectedRevisionError } from '../eventstore/event-store.js';
import { conflict, notFound } from '../http/problem.js';
import type { ProjectionRunner } from '../projections/projection-runner.js';
import type { DevicesReadModel, DeviceView } from '../projections/devices-read-model.js';
import { type DeviceEvent, deviceStream } from './device-events.js';

export interface CreateDevice {
  id?: string;
  name: string;
  engine?: Engine;
  metadata?: Record<string, unknown>;
}

export interface UpdateDevice {
  name?: string;
  metadata?: Record<string, unknown>;
  rotateKey?: boolean;
}

/** A device as answered to the admin, with its key when one was just made. */
export type DeviceWithKey = DeviceView & { deviceKey?: string };

interface RegistryState {
  revision: number;
  live: boolean;
}

const MAX_ATTEMPTS = 5;

/**
 * Commands on the device registry. Each decides from the device's own stream (the source of truth),
 * appends with that stream's revision, and answers from the read model once it includes the append.
 */
export class DeviceRegistry {
  constructor(
    private readonly store: EventStore,
    private readonly projections: ProjectionRunner,
    private readonly devices: DevicesReadModel,
    private readonly defaultEngine: Engine,
  ) {}

  async create(input: CreateDevice): Promise<DeviceWithKey> {
    const deviceId = input.id ?? randomUUID();
    const deviceKey = generateDeviceKey();
    const event: DeviceEvent = {
      type: 'DeviceCreated',
      data: {
        deviceId,
        name: input.name,
        engine: input.engine ?? this.defaultEngine,
        metadata: input.metadata ?? {},
        keyHash: hashKey(deviceKey),
      },
    };
    try {
      // no_stream: an id whose stream exists, even of a deleted device, stays taken.
      const { position } = await this.store.append(deviceStream(deviceId), [event], { expectedRevision: 'no_stream' });
      return { ...(await this.viewAt(deviceId, position)), deviceKey };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      if (input.id === undefined) return this.create(input); // a generated id collided: draw another
      throw conflict('device_exists', `device id "${deviceId}" is in use or was used before`);
    }
  }

  async update(deviceId: string, change: UpdateDevice): Promise<DeviceWithKey> {
    const deviceKey = change.rotateKey ? generateDeviceKey() : undefined;
    const events: DeviceEvent[] = [];
    if (change.name !== undefined || change.metadata !== undefined) {
      events.push({ type: 'DeviceUpdated', data: { deviceId, name: change.name, metadata: change.metadata } });
    }
    if (deviceKey) events.push({ type: 'DeviceKeyRotated', data: { deviceId, keyHash: hashKey(deviceKey) } });
    const position = await this.decideAndAppend(deviceId, events);
    const view = await this.viewAt(deviceId, position);
    return deviceKey ? { ...view, deviceKey } : view;
  }

  async delete(deviceId: string): Promise<void> {
    const position = await this.decideAndAppend(deviceId, [{ type: 'DeviceDeleted', data: { deviceId } }]);
    await this.projections.waitFor(position);
  }

  /** Appends to a live device's stream at the revision it was read at; a concurrent change makes it read again. */
  private async decideAndAppend(deviceId: string, events: DeviceEvent[]): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      const state = await this.load(deviceId);
      if (!state.live) throw notFound(`device "${deviceId}" does not exist`);
      if (events.length === 0) return 0;
      try {
        const result = await this.store.append(deviceStream(deviceId), events as NewEvent[], { expectedRevision: state.revision });
        return result.position;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError) || attempt >= MAX_ATTEMPTS) throw error;
      }
    }
  }

  /** Registry streams hold a handful of events (create, edits, rotations, delete), so folding all of them is cheap. */
  private async load(deviceId: string): Promise<RegistryState> {
    const events = await this.store.readStream(deviceStream(deviceId));
    const last = events[events.length - 1];
    return {
      revision: last?.revision ?? -1,
      live: events.some((e) => e.type === 'DeviceCreated') && !events.some((e) => e.type === 'DeviceDeleted'),
    };
  }

  private async viewAt(deviceId: string, position: number): Promise<DeviceView> {
    await this.projections.waitFor(position);
    const view = this.devices.get(deviceId);
    if (!view) throw notFound(`device "${deviceId}" does not exist`);
    return view;
  }
}
