/**
 * Writes that an engine or a dispatcher may repeat are recorded once on EventStoreDB even after the
 * server restarted (issue 13, defect 1): a restarted node has lost the in-memory cache that deduplicates
 * `any` appends by event id, so the inbox and the delivery lanes deduplicate by their streams' state,
 * appending with expected revisions (src/inbox/inbox-decider.ts, src/webhooks/delivery-lane-decider.ts).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { StoreMessageSink } from '../../src/actors/message-sink.js';
import type { InboundMessage } from '../../src/engines/engine.js';
import type { EventStore } from '../../src/eventstore/event-store.js';
import { openEventStoreDbStore } from '../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import { outboxStream } from '../../src/messages/message-events.js';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { Outboxes } from '../../src/outbox/stream/outboxes.js';
import { pino } from 'pino';
import { type WebhookDeliveryAttemptedData, webhooksStream } from '../../src/webhooks/delivery-events.js';
import { createDeliveryLaneCommands } from '../../src/webhooks/webhooks.js';
import { type EsdbTestServer, startEsdbTestServer } from '../support/esdb-test-server.js';
import { eventually } from '../support/eventually.js';
import { outboxReceipts } from '../support/outbox-receipts.js';

let server: EsdbTestServer;
const opened: EventStore[] = [];
const open = async (options: Parameters<typeof openEventStoreDbStore>[1] = {}) => {
  const store = await openEventStoreDbStore(server.url, options);
  opened.push(store);
  return store;
};

beforeAll(async () => {
  server = await startEsdbTestServer();
});
afterEach(async () => {
  server.appendDelayMs = 0;
  await Promise.allSettled(opened.splice(0).map((store) => store.close()));
});
afterAll(async () => {
  await server.stop();
});

const inbound = (waMessageId: string): InboundMessage => ({
  waMessageId,
  from: '4915112345678',
  type: 'text',
  body: 'hi',
  timestamp: 1_790_000_000,
});
const waIdsIn = async (store: EventStore, deviceId: string) =>
  (await store.readStream(inboxStream(deviceId))).map((event) => (event.data as { waMessageId: string }).waMessageId);

describe('inbound messages on EventStoreDB', () => {
  it('records a message WhatsApp delivers again after the server restarted once', async () => {
    const store = await open();
    const device = `dev${randomUUID().slice(0, 8)}`;
    const sink = new StoreMessageSink(store, outboxReceipts(store));
    await sink.received(device, inbound('A'));
    await sink.received(device, inbound('B'));
    await server.restart();
    await eventually(async () => (await sink.received(device, inbound('A')), true), 'the sink after the restart');
    // A new process (nothing in memory) meets the same replay.
    await new StoreMessageSink(store, outboxReceipts(store)).received(device, inbound('B'));
    await sink.received(device, inbound('C'));
    expect(await waIdsIn(store, device)).toEqual(['A', 'B', 'C']);
  });

  it('records once a message whose first append landed but timed out, retried after a restart', async () => {
    const store = await open({ operationDeadlineMs: 300 });
    const device = `dev${randomUUID().slice(0, 8)}`;
    const sink = new StoreMessageSink(store, outboxReceipts(store));
    await sink.received(device, inbound('A'));
    server.appendDelayMs = 1_000; // written by the server, but after the client gave up
    await expect(sink.received(device, inbound('B'))).rejects.toThrow();
    await eventually(async () => (await waIdsIn(store, device)).includes('B'), 'the late write to land');
    server.appendDelayMs = 0;
    await server.restart();
    await eventually(async () => (await sink.received(device, inbound('B')), true), 'the retried message');
    expect(await waIdsIn(store, device)).toEqual(['A', 'B']);
  });
});

describe('delivery attempts on EventStoreDB', () => {
  const attempt = (deviceId: string, deliveryId: string, n: number): WebhookDeliveryAttemptedData => ({
    deviceId,
    deliveryId,
    round: 0,
    attempt: n,
    outcome: 'retrying',
    status: 500,
    durationMs: 3,
    attemptedAt: '2026-11-22T12:00:00.000Z',
    nextAttemptAt: '2026-11-22T12:00:05.000Z',
  });

  it('records an attempt re-appended through the lane writer after a restart once', async () => {
    const store = await open();
    const device = `dev${randomUUID().slice(0, 8)}`;
    const lanes = createDeliveryLaneCommands(store);
    await lanes.handle(webhooksStream(device), { type: 'RecordAttempt', attempt: attempt(device, 'x', 1) });
    await server.restart();
    await eventually(
      async () => (
        await lanes.handle(webhooksStream(device), { type: 'RecordAttempt', attempt: attempt(device, 'x', 1) }),
        true
      ),
    );
    await createDeliveryLaneCommands(store).handle(webhooksStream(device), {
      type: 'RecordAttempt',
      attempt: attempt(device, 'x', 1),
    });
    await lanes.handle(webhooksStream(device), { type: 'RecordAttempt', attempt: attempt(device, 'x', 2) });
    const attempts = (await store.readStream(webhooksStream(device))).map(
      (event) => (event.data as WebhookDeliveryAttemptedData).attempt,
    );
    expect(attempts).toEqual([1, 2]);
  });
});

describe('receipts on EventStoreDB', () => {
  it('records a receipt WhatsApp repeats after a restart once (through the outbox, the one writer of its stream)', async () => {
    const store = await open();
    const device = `dev${randomUUID().slice(0, 8)}`;
    const log = pino({ level: 'silent' });
    const sent = {
      outboxId: randomUUID(),
      waMessageId: '3EB0000000000000000042',
      to: '4915112345678',
      content: { kind: 'text' as const, text: 'hi' },
      createdAt: new Date().toISOString(),
    };
    const receipt = {
      waMessageId: sent.waMessageId,
      status: 'delivered' as const,
      recipient: '4915112345678',
      timestamp: 5,
    };
    const recordReceipt = { type: 'RecordReceipt', deviceId: device, receipt, sent: null } as const;
    const outboxes = new Outboxes(store, log);
    await outboxes.execute(device, { type: 'QueueMessage', deviceId: device, message: sent });
    await outboxes.execute(device, recordReceipt);
    await server.restart();
    await eventually(async () => (await outboxes.execute(device, recordReceipt), true), 'the outbox after the restart');
    // A new process: the outbox is loaded from the store.
    const fresh = new Outboxes(store, log);
    await eventually(async () => (await fresh.execute(device, recordReceipt), true), 'a new outbox after the restart');
    const statuses = (await store.readStream(outboxStream(device))).filter(
      (event) => event.type === 'MessageStatusChanged',
    );
    expect(statuses.map((event) => (event.data as { status: string }).status)).toEqual(['delivered']);
  });
});
