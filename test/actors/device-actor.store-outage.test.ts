/**
 * The store refuses writes for a while (a full disk): what the engine reports in that window is kept,
 * the device stops taking more (its connection is closed, state `reconnecting`, reason
 * `store_unavailable`), and once the store takes writes again everything lands, in order, once, and the
 * device connects again.
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DeviceActor } from '../../src/actors/device-actor.js';
import { createDeviceMachine } from '../../src/actors/device-machine.js';
import { StoreMessageSink } from '../../src/actors/message-sink.js';
import { ContactsRecorder } from '../../src/contacts/contacts-recorder.js';
import type { InboundMessage, Receipt } from '../../src/engines/engine.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { inboxStream, outboxStream } from '../../src/messages/message-events.js';
import { eventually } from '../support/eventually.js';
import { FailingWritesStore } from '../support/failing-store.js';
import { tempDir } from '../support/gateway.js';
import { FakeEngine } from './support/fake-engine.js';
import { sessionChanges } from '../support/sessions.js';

const SETTINGS = { baseDelayMs: 1, maxDelayMs: 5, jitter: 0.2, maxAttempts: 3 };
const ACCOUNT = { phone: '4915100000042', jid: '4915100000042@s.whatsapp.net' };

const message = (n: number): InboundMessage => ({ waMessageId: `IN-${n}`, from: '4915100000099', type: 'text', body: `hello ${n}`, timestamp: 1_700_000_000 + n });
const receipt = (n: number, status: Receipt['status']): Receipt => ({ waMessageId: `OUT-${n}`, status, recipient: '4915100000099', timestamp: 1_700_000_000 + n });

describe('engine reports while the store cannot write', () => {
  let sqlite: SqliteEventStore;
  let store: FailingWritesStore;
  let engine: FakeEngine;
  let actor: DeviceActor;

  beforeEach(() => {
    sqlite = new SqliteEventStore(join(tempDir('dmg-outage-'), 'events.sqlite'));
    store = new FailingWritesStore(sqlite);
    engine = new FakeEngine();
    engine.onConnect = (connection) => connection.events.online(ACCOUNT);
    actor = new DeviceActor({
      deviceId: 'dev',
      resolveEngine: async () => engine,
      store,
      machine: createDeviceMachine(SETTINGS),
      sink: new StoreMessageSink(store, new ContactsRecorder(store).listener),
      log: pino({ level: 'silent' }),
      onTransition: () => undefined,
      spool: { baseDelayMs: 5, maxDelayMs: 50 },
    });
  });
  afterEach(async () => {
    await actor.stop();
    await sqlite.close();
  });

  const inbox = async () => (await sqlite.readStream(inboxStream('dev'))).map((e) => (e.data as { waMessageId: string }).waMessageId);
  const statuses = async () =>
    (await sqlite.readStream(outboxStream('dev'))).map((e) => `${(e.data as Receipt).waMessageId}:${(e.data as Receipt).status}`);

  it('keeps every inbound message and receipt, holds the intake, and records them in order once the store is back', async () => {
    await actor.open();
    await eventually(() => actor.state() === 'online', 'online');
    const first = engine.last;
    await first.events.inbound(message(0));

    store.failing = true;
    const durable = [
      first.events.inbound(message(1)),
      first.events.receipt(receipt(1, 'delivered')),
      first.events.inbound(message(2)),
      first.events.receipt(receipt(1, 'read')),
      first.events.contacts([{ number: '4915100000099', jid: '4915100000099@s.whatsapp.net', name: 'Ann' }]),
    ];
    let settled = 0;
    for (const promise of durable) void promise.then(() => settled++, () => settled++);

    // The intake stops: the connection is closed and no other is opened while the store refuses writes.
    await eventually(() => actor.state() === 'reconnecting' && first.closed, 'the intake to be held');
    // Reports of the closed connection still arrive (the network had acknowledged them): kept as well.
    const late = first.events.inbound(message(3));
    void late.then(() => settled++, () => settled++);
    const refusedBefore = store.refused;
    await eventually(() => store.refused > refusedBefore + 3, 'the spool to keep trying');
    expect(engine.connections).toHaveLength(1);
    expect(settled).toBe(0);
    expect(actor.heldReports()).toBe(6);

    store.failing = false;
    await Promise.all([...durable, late]);
    await eventually(() => actor.state() === 'online' && engine.connections.length === 2, 'online again on a new connection');

    expect(await inbox()).toEqual(['IN-0', 'IN-1', 'IN-2', 'IN-3']);
    expect(await statuses()).toEqual(['OUT-1:delivered', 'OUT-1:read']);
    expect((await sqlite.readStream('contacts-dev')).map((e) => e.type)).toEqual(['ContactsUpdated']);
    expect(actor.heldReports()).toBe(0);
    const changes = await sessionChanges(sqlite, 'dev');
    expect(changes.map((c) => `${c.state}:${c.reason}`)).toEqual([
      'connecting:opened',
      'online:connected',
      'reconnecting:store_unavailable',
      'online:connected',
    ]);

    // Reported twice (a redelivery after the reconnect): recorded once.
    await engine.last.events.inbound(message(2));
    expect(await inbox()).toEqual(['IN-0', 'IN-1', 'IN-2', 'IN-3']);
  });

  it('a report whose sender waits for the answer is refused at once and never recorded later', async () => {
    await actor.open();
    await eventually(() => actor.state() === 'online', 'online');
    store.failing = true;
    await expect(engine.last.events.inbound(message(7), { retry: false })).rejects.toThrow(/disk is full/);
    store.failing = false;
    // Nothing was kept for it, so the device never stopped its intake.
    expect(actor.heldReports()).toBe(0);
    expect(actor.state()).toBe('online');
    await engine.last.events.inbound(message(8), { retry: false });
    expect(await inbox()).toEqual(['IN-8']);
  });
});
