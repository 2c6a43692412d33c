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
import { createDeviceMachine } from '../../src/sessions/device-machine.js';
import { StoreMessageSink } from '../../src/actors/message-sink.js';
import { ContactsCommands } from '../../src/contacts/contacts-commands.js';
import type { InboundMessage, Receipt } from '../../src/engines/engine.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { outboxStream } from '../../src/messages/message-events.js';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { eventually } from '../support/eventually.js';
import { FailingWritesStore } from '../support/failing-store.js';
import { tempDir } from '../support/gateway.js';
import { FakeEngine } from './support/fake-engine.js';
import { sessionChanges } from '../support/sessions.js';
import { outboxReceipts } from '../support/outbox-receipts.js';

const SETTINGS = { baseDelayMs: 1, maxDelayMs: 5, jitter: 0.2, maxAttempts: 3 };
const ACCOUNT = { phone: '4915100000042', jid: '4915100000042@s.whatsapp.net' };

const message = (n: number): InboundMessage => ({
  waMessageId: `IN-${n}`,
  from: '4915100000099',
  type: 'text',
  body: `hello ${n}`,
  timestamp: 1_700_000_000 + n,
});
const receipt = (n: number, status: Receipt['status']): Receipt => ({
  waMessageId: `OUT-${n}`,
  status,
  recipient: '4915100000099',
  timestamp: 1_700_000_000 + n,
});

describe('engine reports while the store cannot write', () => {
  let sqlite: SqliteEventStore;
  let store: FailingWritesStore;
  let engine: FakeEngine;
  let actor: DeviceActor;
  const others: DeviceActor[] = [];

  const makeActor = () =>
    new DeviceActor({
      deviceId: 'dev',
      resolveEngine: async () => engine,
      store,
      machine: createDeviceMachine(SETTINGS),
      sink: new StoreMessageSink(store, outboxReceipts(store), new ContactsCommands(store).listener),
      log: pino({ level: 'silent' }),
      onTransition: () => undefined,
      // Short: what the tests count is tries, not the time between them.
      spool: { baseDelayMs: 1, maxDelayMs: 5 },
    });

  beforeEach(() => {
    sqlite = new SqliteEventStore(join(tempDir('dmg-outage-'), 'events.sqlite'));
    store = new FailingWritesStore(sqlite);
    engine = new FakeEngine();
    engine.onConnect = (connection) => connection.events.online(ACCOUNT);
    actor = makeActor();
  });
  afterEach(async () => {
    await actor.stop();
    for (const other of others.splice(0)) await other.stop();
    await sqlite.close();
  });

  const inbox = async () =>
    (await sqlite.readStream(inboxStream('dev'))).map((e) => (e.data as { waMessageId: string }).waMessageId);
  const statuses = async () =>
    (await sqlite.readStream(outboxStream('dev'))).map(
      (e) => `${(e.data as Receipt).waMessageId}:${(e.data as Receipt).status}`,
    );

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
    for (const promise of durable)
      void promise.then(
        () => settled++,
        () => settled++,
      );

    // The intake stops: the connection is closed and no other is opened while the store refuses writes.
    await eventually(() => actor.state() === 'reconnecting' && first.closed, 'the intake to be held');
    // Reports of the closed connection still arrive (the network had acknowledged them): kept as well.
    const late = first.events.inbound(message(3));
    void late.then(
      () => settled++,
      () => settled++,
    );
    const refusedBefore = store.refused;
    await eventually(() => store.refused > refusedBefore + 3, 'the spool to keep trying');
    expect(engine.connections).toHaveLength(1);
    expect(settled).toBe(0);
    expect(actor.heldReports()).toBe(6);

    store.failing = false;
    await Promise.all([...durable, late]);
    await eventually(
      () => actor.state() === 'online' && engine.connections.length === 2,
      'online again on a new connection',
    );

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

  it('a held intake is resumed however long the store refuses the change that records its resumption', async () => {
    await actor.open();
    await eventually(() => actor.state() === 'online', 'online');
    const first = engine.last;
    store.failing = true;
    void first.events.inbound(message(1)).catch(() => undefined);
    await eventually(() => actor.state() === 'reconnecting' && first.closed, 'the intake to be held');
    // The spool's messages go in again; the session's own record is refused many times more (a minute's worth of tries before).
    let refusals = 0;
    store.refusing = (streamId) => streamId.startsWith('session-') && refusals++ < 65;
    store.failing = false;
    await eventually(
      () => refusals >= 65 && actor.state() === 'online' && engine.connections.length === 2,
      'online again on a new connection',
      30_000,
    );
    expect(await inbox()).toEqual(['IN-1']);
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

  it('a lost connection the store cannot record is tried again until it can, however long that takes; then the device reconnects', async () => {
    await actor.open();
    await eventually(() => actor.state() === 'online', 'online');
    store.failing = true;
    const refusedBefore = store.refused;
    engine.last.events.disconnected('transient', 'ECONNRESET');
    // Far more tries than any fixed number: the report is never given up.
    await eventually(() => store.refused >= refusedBefore + 20, 'the lost connection to be tried again and again');
    expect(engine.connections).toHaveLength(1);

    store.failing = false;
    await eventually(
      () => actor.state() === 'online' && engine.connections.length === 2 && actor.liveConnection() === engine.last,
      'online again on a new connection',
    );
    const changes = await sessionChanges(sqlite, 'dev');
    expect(changes.map((c) => `${c.state}:${c.reason}`)).toEqual([
      'connecting:opened',
      'online:connected',
      'reconnecting:connection_lost',
      'online:connected',
    ]);
  });

  it('a failed reconnection try the store cannot record is not lost either: the retries go on once it can', async () => {
    engine.onConnect = (connection, index) => {
      if (index !== 1) return connection.events.online(ACCOUNT);
      // The network and the store fail together.
      store.failing = true;
      connection.events.disconnected('transient', 'getaddrinfo ENOTFOUND web.whatsapp.com');
    };
    await actor.open();
    await eventually(() => actor.state() === 'online', 'online');
    const refusedBefore = store.refused;
    engine.last.events.disconnected('transient', 'ECONNRESET');
    await eventually(() => store.refused >= refusedBefore + 20, 'the failed try to be tried again and again');
    expect(engine.connections).toHaveLength(2);

    store.failing = false;
    await eventually(
      () => actor.state() === 'online' && engine.connections.length === 3,
      'online again after the next try',
    );
    const changes = await sessionChanges(sqlite, 'dev');
    expect(changes.map((c) => `${c.state}:${c.reason}`)).toEqual([
      'connecting:opened',
      'online:connected',
      'reconnecting:connection_lost',
      'reconnecting:attempt_failed',
      'online:connected',
    ]);
  });

  it('a running session whose resume the store refuses at start is resumed once the store takes writes', async () => {
    await actor.open();
    await eventually(() => actor.state() === 'online', 'online');
    await actor.stop(); // the process stops; its record says online

    const restarted = makeActor();
    others.push(restarted);
    store.failing = true;
    await expect(restarted.load()).rejects.toThrow(/disk is full/);
    // Not loaded: it claims no state it does not hold.
    expect(restarted.state()).toBeUndefined();

    store.failing = false;
    await eventually(
      () => restarted.state() === 'online' && restarted.liveConnection() === engine.last,
      'resumed on a new connection',
    );
    // A command meanwhile neither misses the resume nor makes another connection.
    expect(await restarted.open()).toEqual({ state: 'online', changed: false });
    expect(engine.connections).toHaveLength(2);
    const changes = await sessionChanges(sqlite, 'dev');
    expect(changes.map((c) => `${c.state}:${c.reason}`).slice(-2)).toEqual(['connecting:restored', 'online:connected']);
  });

  it('a command after a refused resume loads the session again and resumes it', async () => {
    await actor.open();
    await eventually(() => actor.state() === 'online', 'online');
    await actor.stop();

    const restarted = makeActor();
    others.push(restarted);
    store.failing = true;
    await expect(restarted.load()).rejects.toThrow(/disk is full/);
    await expect(restarted.open()).rejects.toThrow(/disk is full/);
    store.failing = false;
    await restarted.open();
    await eventually(
      () => restarted.state() === 'online' && restarted.liveConnection() === engine.last,
      'resumed on a new connection',
    );
    expect(engine.connections).toHaveLength(2);
  });
});
