/**
 * The server's size limits known before an append is sent (src/eventstore/eventstoredb/append-limits.ts): set by
 * configuration, or learned from the server's first refusal, which names its limit (issue 31).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { type EventStore, StoreRefusedError } from '../../../src/eventstore/event-store.js';
import { openEventStoreDbStore } from '../../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import { EsdbTestServer } from '../../support/esdb-test-server.js';

const servers: EsdbTestServer[] = [];
const opened: EventStore[] = [];
const start = async (version: string) => {
  const server = await new EsdbTestServer({ version }).start();
  servers.push(server);
  return server;
};
const open = async (url: string, options: Parameters<typeof openEventStoreDbStore>[1] = {}) => {
  const store = await openEventStoreDbStore(url, options);
  opened.push(store);
  return store;
};
const stream = () => `limits-${randomUUID()}`;
const big = (bytes: number) => ({ type: 'Big', data: { big: 'x'.repeat(bytes) } });
const writes = (server: EsdbTestServer) => server.calls.append + server.calls.appendRecords;

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((store) => store.close()));
  await Promise.allSettled(servers.splice(0).map((server) => server.stop()));
});

describe("the event store's size limits (issue 31)", () => {
  it('refuses an append over the configured limits before sending it (413), and keeps no such snapshot', async () => {
    const server = await start('25.1.4');
    const store = await open(server.url, { limits: { maxEventBytes: 5_000, maxAppendBytes: 8_000 } });
    const s = stream();
    const before = writes(server);
    await expect(store.append(s, [big(6_000)])).rejects.toMatchObject({
      constructor: StoreRefusedError,
      code: 'append_too_large',
      message: expect.stringContaining('5000 bytes'),
    });
    await expect(store.append(s, [big(3_000), big(3_000), big(3_000)])).rejects.toMatchObject({
      code: 'append_too_large',
      message: expect.stringContaining('8000 bytes'),
    });
    await store.saveSnapshot(s, { revision: 1, state: { big: 'x'.repeat(6_000) } });
    expect(writes(server)).toBe(before);
    expect(await store.loadSnapshot(s)).toBeNull();
    await expect(store.append(s, [big(1_000)])).resolves.toMatchObject({ nextExpectedRevision: 0 });
  });

  it("learns the limit a server's refusal names, and refuses the next append over it without sending it", async () => {
    for (const [version, fenced] of [
      ['24.10.0', false],
      ['26.0.3', true],
    ] as const) {
      const server = await start(version);
      server.maxAppendEventSize = 50_000;
      server.maxAppendSize = 120_000;
      const store = await open(server.url);
      const s = stream();
      const lease = stream();
      await store.append(lease, [{ type: 'LeaseAcquired', data: {} }]);
      const options = fenced ? { fence: { streamId: lease, revision: 0 } } : {};
      for (const events of [[big(60_000)], [big(40_000), big(40_000), big(40_000), big(40_000)]]) {
        const before = writes(server);
        await expect(store.append(s, events, options)).rejects.toMatchObject({ code: 'append_too_large' });
        expect(writes(server)).toBe(before + 1);
        await expect(store.append(s, events, options)).rejects.toMatchObject({ code: 'append_too_large' });
        expect(writes(server)).toBe(before + 1);
      }
      await expect(store.append(s, [big(1_000)], options)).resolves.toMatchObject({ nextExpectedRevision: 0 });
    }
  });
});
