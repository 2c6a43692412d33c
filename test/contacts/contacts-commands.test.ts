/**
 * The contacts read model and the recording of engine contact reports, against a real SQLite store and
 * projection runner: what each event does to the table, a deleted device, repeated and concurrent reports.
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contactsStream } from '../../src/contacts/contact-events.js';
import { ContactsReadModel } from '../../src/contacts/contacts-read-model.js';
import { contactChanges } from '../../src/contacts/contacts-decider.js';
import { ContactsCommands } from '../../src/contacts/contacts-commands.js';
import type { NewEvent } from '../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { ProjectionRunner } from '../../src/projections/projection-runner.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { tempDir } from '../support/temp-dir.js';

const log = pino({ level: 'silent' });
const jid = (number: string) => `${number}@s.whatsapp.net`;

describe('contacts read model and ContactsCommands', () => {
  let dir: string;
  let store: SqliteEventStore;
  let db: ReturnType<typeof openReadModelDb>;
  let view: ContactsReadModel;
  let runner: ProjectionRunner;

  beforeEach(async () => {
    dir = tempDir('dmg-contacts-unit-');
    store = new SqliteEventStore(join(dir, 'events.sqlite'));
    db = openReadModelDb(dir);
    view = new ContactsReadModel(db);
    runner = new ProjectionRunner(store, db, [view], log);
    await runner.start();
  });
  afterEach(async () => {
    await runner.stop();
    await store.close();
    db.close();
  });

  const append = async (stream: string, ...events: NewEvent[]) =>
    runner.waitFor((await store.append(stream, events)).position);
  const commands = () => new ContactsCommands(store);
  const all = (deviceId: string) => view.list(deviceId, { limit: 500 }).items;

  it('merges what each event says about a number, field by field', async () => {
    await append('outbox-d1', {
      type: 'OutboxMessageQueued',
      data: {
        deviceId: 'd1',
        outboxId: 'o1',
        waMessageId: 'W1',
        to: '4915111111111',
        seq: 1,
        content: { kind: 'text', text: 'x' },
        createdAt: '2026-01-01T00:00:00.000Z',
      },
    });
    await append('inbox-d1', {
      type: 'MessageReceived',
      data: {
        deviceId: 'd1',
        from: '4915111111111',
        type: 'text',
        body: 'hi',
        timestamp: 1,
        waMessageId: 'I1',
        pushName: 'Anna',
      },
    });
    await append('contacts-d1', {
      type: 'ContactsUpdated',
      data: { deviceId: 'd1', contacts: [{ number: '4915111111111', jid: jid('4915111111111'), name: 'Anna K.' }] },
    });
    // A message without a push name keeps the one known.
    await append('inbox-d1', {
      type: 'MessageReceived',
      data: { deviceId: 'd1', from: '4915111111111', type: 'text', body: 'again', timestamp: 2, waMessageId: 'I2' },
    });
    expect(all('d1')).toEqual([
      { number: '4915111111111', jid: jid('4915111111111'), name: 'Anna K.', pushName: 'Anna' },
    ]);
    await append('inbox-d1', {
      type: 'MessageReceived',
      data: {
        deviceId: 'd1',
        from: '4915111111111',
        type: 'text',
        body: 'new name',
        timestamp: 3,
        waMessageId: 'I3',
        pushName: 'Anna ☀',
      },
    });
    expect(all('d1')).toEqual([
      { number: '4915111111111', jid: jid('4915111111111'), name: 'Anna K.', pushName: 'Anna ☀' },
    ]);
  });

  it("drops a deleted device's contacts and ignores its later events, also after a restart of the read model", async () => {
    await append('inbox-d2', {
      type: 'MessageReceived',
      data: { deviceId: 'd2', from: '4915122222222', type: 'text', body: 'hi', timestamp: 1, waMessageId: 'I1' },
    });
    await append('inbox-d3', {
      type: 'MessageReceived',
      data: { deviceId: 'd3', from: '4915133333333', type: 'text', body: 'hi', timestamp: 1, waMessageId: 'I1' },
    });
    await append('device-d2', { type: 'DeviceDeleted', data: { deviceId: 'd2' } });
    expect(all('d2')).toEqual([]);
    await append('inbox-d2', {
      type: 'MessageReceived',
      data: { deviceId: 'd2', from: '4915122222223', type: 'text', body: 'late', timestamp: 2, waMessageId: 'I2' },
    });
    expect(all('d2')).toEqual([]);

    await runner.stop();
    const again = new ContactsReadModel(db);
    again.setup(db);
    again.apply({
      id: 'x',
      streamId: 'inbox-d2',
      revision: 9,
      position: 999,
      type: 'MessageReceived',
      data: { deviceId: 'd2', from: '4915122222224' },
      metadata: {},
      createdAt: new Date(),
    });
    expect(again.list('d2', { limit: 10 }).items).toEqual([]);
    expect(again.list('d3', { limit: 10 }).items.map((c) => c.number)).toEqual(['4915133333333']);
  });

  it('appends nothing for a report that changes nothing, and one event per change', async () => {
    const contacts = commands();
    const alice = { number: '4915144444444', jid: jid('4915144444444'), name: 'Alice', pushName: 'Ali' };
    await contacts.record('d4', [alice]);
    await contacts.record('d4', [alice]);
    await contacts.record('d4', [{ number: alice.number, jid: alice.jid }]);
    await contacts.record('d4', [{ number: alice.number, jid: alice.jid, pushName: 'Alice!' }]);
    const events = await store.readStream(contactsStream('d4'));
    expect(events.map((e) => e.data)).toEqual([
      { deviceId: 'd4', contacts: [alice] },
      { deviceId: 'd4', contacts: [{ number: alice.number, jid: alice.jid, pushName: 'Alice!' }] },
    ]);
  });

  it('records reports of one device in turn, each compared with what the ones before recorded', async () => {
    const contacts = commands();
    const bob = { number: '4915155555555', jid: jid('4915155555555'), name: 'Bob' };
    await Promise.all([
      contacts.record('d5', [bob]),
      contacts.record('d5', [bob]),
      contacts.record('d5', [{ ...bob, name: 'Robert' }]),
      contacts.record('d5', [bob]),
    ]);
    const events = await store.readStream(contactsStream('d5'));
    expect(events.map((e) => (e.data as { contacts: Array<{ name: string }> }).contacts[0].name)).toEqual([
      'Bob',
      'Robert',
      'Bob',
    ]);
    await runner.waitFor(events.at(-1)!.position);
    expect(all('d5')).toEqual([bob]);
  });

  it('records the same decision once when two writers make it on the same revision', async () => {
    const report = [{ number: '4915166666666', jid: jid('4915166666666'), name: 'Carla' }];
    await Promise.all([commands().record('d6', report), commands().record('d6', report)]);
    expect(await store.readStream(contactsStream('d6'))).toHaveLength(1);
  });

  it('decides again on the newer state when another writer got in first', async () => {
    const first = [{ number: '4915177777777', jid: jid('4915177777777'), name: 'Dora' }];
    const second = [{ number: '4915188888888', jid: jid('4915188888888'), name: 'Emil' }];
    await Promise.all([commands().record('d7', first), commands().record('d7', second)]);
    const events = await store.readStream(contactsStream('d7'));
    expect(
      events.flatMap((e) => (e.data as { contacts: Array<{ name: string }> }).contacts.map((c) => c.name)).sort(),
    ).toEqual(['Dora', 'Emil']);
  });

  it('splits a large first sync into events of at most 500 contacts', async () => {
    const many = Array.from({ length: 1_201 }, (_, i) => ({
      number: `49160${String(i).padStart(8, '0')}`,
      jid: jid(`49160${String(i).padStart(8, '0')}`),
      name: `Person ${i}`,
    }));
    await commands().record('d8', many);
    const events = await store.readStream(contactsStream('d8'));
    expect(events.map((e) => (e.data as { contacts: unknown[] }).contacts.length)).toEqual([500, 500, 201]);
    await runner.waitFor(events.at(-1)!.position);
    expect(view.list('d8', { limit: 500, q: 'person 1200' }).items.map((c) => c.name)).toEqual(['Person 1200']);
  });
});

describe('contactChanges', () => {
  const known = new Map([
    ['4915111111111', { number: '4915111111111', jid: jid('4915111111111'), name: 'Anna', pushName: 'A' }],
  ]);
  const lookup = (number: string) => known.get(number);

  it('keeps entries that add or change something, one per number, later fields winning', () => {
    expect(
      contactChanges(
        [
          { number: '4915111111111', jid: jid('4915111111111'), name: 'Anna' },
          { number: '4915122222222', jid: jid('4915122222222'), name: 'Ben' },
          { number: '4915122222222', jid: jid('4915122222222'), pushName: 'B' },
          { number: '4915111111111', jid: jid('4915111111111'), pushName: 'Annie' },
          { number: 'not-digits', jid: 'x@lid' },
        ],
        lookup,
      ),
    ).toEqual([
      { number: '4915111111111', jid: jid('4915111111111'), name: 'Anna', pushName: 'Annie' },
      { number: '4915122222222', jid: jid('4915122222222'), name: 'Ben', pushName: 'B' },
    ]);
  });

  it('drops entries that say nothing new', () => {
    expect(
      contactChanges(
        [
          { number: '4915111111111', jid: jid('4915111111111') },
          { number: '4915111111111', jid: jid('4915111111111'), name: 'Anna' },
        ],
        lookup,
      ),
    ).toEqual([]);
  });
});
