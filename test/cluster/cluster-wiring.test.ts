/**
 * The cluster's wiring on its own (no HTTP): a device created in the log is taken by a process at its next lease
 * tick, though its device list (read from the read models, refreshed every 2 s) does not show the device yet.
 */
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type ClusterNode, startLeases } from '../../src/cluster/cluster-wiring.js';
import { OwnerCalls } from '../../src/cluster/owner-calls.js';
import { loadConfig } from '../../src/config.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp-dir.js';
import { TestClock } from '../support/test-clock.js';

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

describe('a process of several', () => {
  it('takes a device created in the log at once, before its device list shows it', async () => {
    const store = new SqliteEventStore(join(tempDir('dmg-wiring-'), 'events.sqlite'), { sharedFile: true });
    stops.push(() => store.close());
    const clock = new TestClock();
    const started: string[] = [];
    const node = startLeases(loadConfig({ GATEWAY_CLUSTER: 'true', LEASE_TIMEOUT: '60s' }), {
      store,
      log: pino({ level: 'silent' }),
      // The read models lag: the list shows no device for now.
      devices: { list: () => ({ items: [], nextAfter: null }) },
      after: () => 0,
      metrics: new Metrics(),
      clock,
      calls: new OwnerCalls({ position: () => 0, settle: async () => undefined, recordedState: () => undefined }),
    }) as ClusterNode;
    const running = {
      sessions: { adopt: async (deviceId: string) => void started.push(deviceId), release: async () => undefined },
      webhooks: { wake: () => undefined },
      sending: { outboxes: { refresh: () => undefined }, drainer: { kick: () => undefined } },
    };
    node.start(running as unknown as Parameters<ClusterNode['start']>[0]);
    stops.push(() => node.stop());
    await eventually(() => clock.pending().length > 0, 'the first tick done');

    await store.append('device-new-1', [
      {
        type: 'DeviceCreated',
        data: { deviceId: 'new-1', name: 'New', engine: 'sandbox', at: new Date().toISOString() },
      },
    ]);
    // At the next timed tick (1 s), not after the list's refresh (2 s).
    const from = clock.now();
    await eventually(async () => {
      if (clock.now() - from < 1_500) await clock.advance(20);
      return node.owns('new-1');
    }, 'the new device taken');
    expect(started).toEqual(['new-1']);
  });
});
