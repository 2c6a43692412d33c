/**
 * DELETE /devices/:id drops the device's outbox: whatever was still waiting becomes `cancelled` (with
 * error `device_deleted`) and its media leaves the disk. Follows DeviceDeleted events live, and at start
 * catches up on devices deleted while the process was down (or before it got to them).
 */
import type { Logger } from 'pino';
import type { EventStore } from '../../eventstore/event-store.js';
import { followAll } from '../../eventstore/follow-all.js';
import type { MediaStore } from '../../media/media-store.js';
import { mediaOf } from '../stream/outbox-events.js';
import type { Outboxes } from '../stream/outboxes.js';

export interface DeletedDeviceOutboxesDeps {
  store: EventStore;
  outboxes: Outboxes;
  media: Pick<MediaStore, 'remove'>;
  log: Logger;
}

export class DeletedDeviceOutboxes {
  private following: { stop(): Promise<void> } | undefined;

  constructor(private readonly deps: DeletedDeviceOutboxesDeps) {}

  /**
   * `waiting`: devices with messages pending; `exists`: whether a device is still there (read models at `position`).
   * The subscription survives drops: it subscribes again after the last event it handled.
   */
  start(position: number, waiting: readonly string[], exists: (deviceId: string) => boolean): void {
    for (const deviceId of waiting) if (!exists(deviceId)) void this.drop(deviceId);
    this.following = followAll(this.deps.store, {
      after: position,
      name: 'outbox: device deletions',
      log: this.deps.log,
      onBatch: async (batch) => {
        for (const event of batch)
          if (event.type === 'DeviceDeleted') await this.drop((event.data as { deviceId: string }).deviceId);
      },
    });
  }

  async stop(): Promise<void> {
    const following = this.following;
    this.following = undefined;
    await following?.stop();
  }

  private async drop(deviceId: string): Promise<void> {
    try {
      const { result } = await this.deps.outboxes.execute(deviceId, {
        type: 'DropOutbox',
        deviceId,
        now: Date.now(),
      });
      await Promise.all(
        result.filter((m) => mediaOf(m.content) !== undefined).map((m) => this.deps.media.remove(deviceId, m.outboxId)),
      );
      if (result.length > 0)
        this.deps.log.info({ deviceId, cancelled: result.length }, 'outbox of a deleted device dropped');
    } catch (error) {
      this.deps.log.error({ err: error, deviceId }, 'could not drop the outbox of a deleted device');
    }
  }
}
