/**
 * Commands on the device registry, each decided by the registry stream's one decider (device-decider.ts)
 * through the shared command handler. Answers are built from the decided state; before answering, the
 * read models are given the chance to include the append, so that the next request sees it.
 */
import { randomUUID } from 'node:crypto';
import { generateDeviceKey, hashKey } from '../auth/keys.js';
import { CommandHandler } from '../commands/command-handler.js';
import type { Engine } from '../config.js';
import { DomainError } from '../errors/domain-error.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import { type DeviceCommand, type DeviceRecord, type DeviceState, deviceDecider } from './device-decider.js';
import { type DeviceStreamEvent, deviceStream } from './device-events.js';
import type { DeviceView } from './devices-read-model.js';

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

export type DeviceCommands = CommandHandler<DeviceState, DeviceCommand, DeviceStreamEvent>;

/** The one writer of `device-<id>` streams; the registry and the hook settings both send their commands through it. */
export const createDeviceCommands = (store: EventStore): DeviceCommands =>
  new CommandHandler({ store, decider: deviceDecider });

export class DeviceRegistry {
  constructor(
    private readonly commands: DeviceCommands,
    private readonly projections: ReadModelProgress,
    /** The device's session as the read models know it (another stream). */
    private readonly sessionOf: (deviceId: string) => DeviceView['session'] | undefined,
    private readonly defaultEngine: Engine,
  ) {}

  async create(input: CreateDevice): Promise<DeviceWithKey> {
    const deviceId = input.id ?? randomUUID();
    const deviceKey = generateDeviceKey();
    const command: DeviceCommand = {
      type: 'CreateDevice',
      deviceId,
      name: input.name,
      engine: input.engine ?? this.defaultEngine,
      metadata: input.metadata ?? {},
      keyHash: hashKey(deviceKey),
      at: new Date().toISOString(),
    };
    try {
      const { state, position } = await this.commands.handle(deviceStream(deviceId), command);
      await this.projections.settle(position);
      return { ...viewOf(state, { state: 'closed' }), deviceKey };
    } catch (error) {
      // A generated id that collided: draw another.
      if (error instanceof DomainError && error.code === 'device_exists' && input.id === undefined)
        return this.create(input);
      throw error;
    }
  }

  async update(deviceId: string, change: UpdateDevice): Promise<DeviceWithKey> {
    const deviceKey = change.rotateKey ? generateDeviceKey() : undefined;
    const { state, position } = await this.commands.handle(deviceStream(deviceId), {
      type: 'UpdateDevice',
      deviceId,
      ...(change.name === undefined ? {} : { name: change.name }),
      ...(change.metadata === undefined ? {} : { metadata: change.metadata }),
      ...(deviceKey === undefined ? {} : { keyHash: hashKey(deviceKey) }),
      at: new Date().toISOString(),
    });
    await this.projections.settle(position);
    const view = viewOf(state, this.sessionOf(deviceId) ?? { state: 'closed' });
    return deviceKey ? { ...view, deviceKey } : view;
  }

  async delete(deviceId: string): Promise<void> {
    const { position } = await this.commands.handle(deviceStream(deviceId), { type: 'DeleteDevice', deviceId });
    await this.projections.settle(position);
  }
}

function viewOf(state: DeviceState, session: DeviceView['session']): DeviceView {
  if (state.status !== 'live') throw new Error('a device command that succeeded left no live device'); // the decider rules it out
  const { id, name, engine, metadata, createdAt, updatedAt }: DeviceRecord = state.device;
  return { id, name, engine, metadata, createdAt, updatedAt, session };
}
