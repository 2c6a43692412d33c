/**
 * The outboxes of a process's devices with another process appending to the same streams, on the EventStoreDB test
 * server: what the other process queued while this one did not run the device is read again when it does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { EventStore } from '../../../src/eventstore/event-store.js';
import { openEventStoreDbStore } from '../../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import { Outboxes } from '../../../src/outbox/stream/outboxes.js';
import { type EsdbTestServer, startEsdbTestServer } from '../../support/esdb-test-server.js';
import { eventually } from '../../support/eventually.js';
import { queueCommand } from '../support/queue-command.js';

const DEVICE = 'shop-1';
const silent = pino({ level: 'silent' });
const queue = (n: number) => queueCommand(DEVICE, n);

describe('outboxes of several processes', () => {
  let server: EsdbTestServer | undefined;
  const stores: EventStore[] = [];
  afterEach(async () => {
    await Promise.allSettled(stores.splice(0).map((store) => store.close()));
    await server?.stop();
  });

  it('a device taken again whose outbox cannot be read at once (an election): read again, and the drainer told', async () => {
    server = await startEsdbTestServer();
    const open = async (deadlineMs: number) => {
      const store = await openEventStoreDbStore(server!.url, { operationDeadlineMs: deadlineMs });
      stores.push(store);
      return store;
    };
    const mine = new Outboxes(await open(500), silent, undefined, true);
    const other = new Outboxes(await open(10_000), silent, undefined, true);
    const told: string[] = [];
    mine.onChange((deviceId) => told.push(deviceId));
    // This process ran the device once (its outbox is loaded), then another ran it and a message was queued there.
    await mine.get(DEVICE);
    await other.execute(DEVICE, queue(1));
    // This process takes the device again while the store does not answer reads for a moment.
    server.fail('read', 'stall', 2);
    mine.refresh(DEVICE);
    // Before: the failed read was not tried again, the drainer never told, the message left unsent.
    await eventually(() => told.includes(DEVICE), 'the drainer told', 10_000);
    expect([...(await mine.get(DEVICE)).current.messages.keys()]).toEqual([queue(1).message.outboxId]);
  });
});
