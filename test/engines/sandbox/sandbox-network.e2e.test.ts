import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreMessageSink } from '../../../src/actors/message-sink.js';
import { inboundEventId } from '../../../src/inbox/inbox-commands.js';
import { EngineError } from '../../../src/engines/engine.js';
import type { StoredEvent } from '../../../src/eventstore/event-store.js';
import { type MessageStatusChangedData, outboxStream } from '../../../src/messages/message-events.js';
import { type MessageReceivedData, inboxStream } from '../../../src/inbox/inbox-events.js';
import { type Api, startTestGateway } from '../../support/gateway.js';
import { type TestDevice, bringOnline, createSandboxDevice } from '../../support/sessions.js';
import { eventually } from '../../support/eventually.js';
import { outboxReceipts } from '../../support/outbox-receipts.js';

describe('the sandbox network', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let alice: TestDevice;
  let bob: TestDevice;
  const ALICE = '4915100001112';
  const BOB = '4915100002224';

  beforeAll(async () => {
    gateway = await startTestGateway({ SANDBOX_DELIVERED_DELAY_MS: '10', SANDBOX_READ_DELAY_MS: '10' });
    api = gateway.api;
    alice = await createSandboxDevice(api, 'alice');
    bob = await createSandboxDevice(api, 'bob');
    await bringOnline(api, alice, ALICE);
    await bringOnline(api, bob, BOB);
  });
  afterAll(() => gateway.close());

  const eventsOf = async <T>(stream: string, type: string) =>
    (await gateway.store.readStream(stream)).filter((e: StoredEvent) => e.type === type).map((e) => e.data as T);

  it('delivers a message to the online device that owns the number, and receipts come back to the sender', async () => {
    const connection = gateway.sessions.connection(alice.id)!;
    await connection.send({ waMessageId: '3EB0AAAA0001', to: BOB, content: { kind: 'text', text: 'hello bob' } });

    const received = await eventually(
      async () => (await eventsOf<MessageReceivedData>(inboxStream(bob.id), 'MessageReceived'))[0],
      'bob to receive',
    );
    expect(received).toMatchObject({
      deviceId: bob.id,
      from: ALICE,
      type: 'text',
      body: 'hello bob',
      waMessageId: '3EB0AAAA0001',
    });
    expect(Number.isInteger(received.timestamp)).toBe(true);

    const statuses = await eventually(async () => {
      const found = await eventsOf<MessageStatusChangedData>(outboxStream(alice.id), 'MessageStatusChanged');
      return found.length >= 2 ? found : undefined;
    }, 'delivered and read receipts');
    expect(statuses.map((s) => s.status)).toEqual(['delivered', 'read']);
    expect(statuses[0]).toMatchObject({ deviceId: alice.id, waMessageId: '3EB0AAAA0001', recipient: BOB });
    expect(statuses[0].outboxId).toBeUndefined();
    expect(await eventsOf(inboxStream(alice.id), 'MessageReceived')).toEqual([]);
  });

  it('maps media, location, link and reaction content to what the recipient sees', async () => {
    const connection = gateway.sessions.connection(bob.id)!;
    await connection.send({
      waMessageId: '3EB0BBBB0001',
      to: ALICE,
      content: { kind: 'image', media: { path: '/tmp/x.jpg', mimetype: 'image/jpeg', size: 1234 }, caption: 'look' },
    });
    await connection.send({
      waMessageId: '3EB0BBBB0002',
      to: ALICE,
      content: { kind: 'location', latitude: 52.5, longitude: 13.4, name: 'Berlin' },
    });
    await connection.send({
      waMessageId: '3EB0BBBB0003',
      to: ALICE,
      content: { kind: 'reaction', messageId: '3EB0AAAA0001', emoji: '👍' },
    });
    const received = await eventually(async () => {
      const found = await eventsOf<MessageReceivedData & { location?: unknown }>(
        inboxStream(alice.id),
        'MessageReceived',
      );
      return found.length >= 3 ? found : undefined;
    }, 'alice to receive three messages');
    expect(received.map((m) => [m.type, m.body])).toEqual([
      ['image', 'look'],
      ['location', 'Berlin'],
      ['reaction', '👍'],
    ]);
    expect(received[0].media).toEqual({ mimetype: 'image/jpeg', size: 1234 });
  });

  it('does not deliver to a device that is not online', async () => {
    const carol = await createSandboxDevice(api, 'carol');
    await bringOnline(api, carol, '4915100003336');
    await api('POST', `/devices/${carol.id}/session/close`, { deviceKey: carol.key });
    await gateway.sessions
      .connection(alice.id)!
      .send({ waMessageId: '3EB0CCCC0001', to: '4915100003336', content: { kind: 'text', text: 'anyone?' } });
    // The receipts prove the network handled the send; by then a delivery would have happened too.
    await eventually(async () => {
      const found = await eventsOf<MessageStatusChangedData>(outboxStream(alice.id), 'MessageStatusChanged');
      return found.some((s) => s.waMessageId === '3EB0CCCC0001' && s.status === 'read') ? true : undefined;
    }, 'receipts of the message to carol');
    expect(await eventsOf(inboxStream(carol.id), 'MessageReceived')).toEqual([]);
  });

  it('numbers ending in 0000 do not exist: sends fail permanently, checks say so', async () => {
    const connection = gateway.sessions.connection(alice.id)!;
    const failure = await connection
      .send({ waMessageId: '3EB0DDDD0001', to: '4915100000000', content: { kind: 'text', text: 'x' } })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(EngineError);
    expect(failure).toMatchObject({ code: 'recipient_not_found', permanent: true });
    expect(await connection.checkNumber('4915100000000')).toEqual({ exists: false });
    expect(await connection.checkNumber('4915100000001')).toEqual({
      exists: true,
      jid: '4915100000001@s.whatsapp.net',
    });
  });

  it('avatars: null for an odd last digit, else a stable URL', async () => {
    const connection = gateway.sessions.connection(alice.id)!;
    expect(await connection.avatarUrl('4915100000013')).toBeNull();
    const url = await connection.avatarUrl('4915100000012');
    expect(url).toMatch(/^https:\/\//);
    expect(await connection.avatarUrl('4915100000012')).toBe(url);
    expect(await connection.avatarUrl('4915100000014')).not.toBe(url);
  });

  it('revoke works while online; a connection that is not online refuses with not_connected', async () => {
    const connection = gateway.sessions.connection(alice.id)!;
    await expect(connection.revoke('3EB0AAAA0001', BOB)).resolves.toBeUndefined();
    await api('POST', `/devices/${alice.id}/session/close`, { deviceKey: alice.key });
    const failure = await connection
      .send({ waMessageId: '3EB0EEEE0001', to: BOB, content: { kind: 'text', text: 'x' } })
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 'not_connected', permanent: false });
    await api('POST', `/devices/${alice.id}/session/open`, { deviceKey: alice.key });
    await eventually(() => gateway.sessions.connection(alice.id), 'alice online again');
  });

  it('POST /sandbox/.../inbound makes the device receive a message, recorded once', async () => {
    const answer = await api('POST', `/sandbox/devices/${bob.id}/inbound`, {
      admin: true,
      json: { from: '4915177788899', body: 'from outside' },
    });
    expect(answer.status).toBe(202);
    const { waMessageId } = answer.body;
    expect(waMessageId).toMatch(/^3EB0[0-9A-F]+$/);
    const received = await eventually(async () => {
      const found = await gateway.store.readStream(inboxStream(bob.id));
      return found.find((e) => (e.data as MessageReceivedData).waMessageId === waMessageId);
    }, 'the inbound message');
    expect(received.id).toBe(inboundEventId(bob.id, waMessageId));
    expect(received.data).toMatchObject({ from: '4915177788899', type: 'text', body: 'from outside' });
    expect(
      (
        await api('POST', `/sandbox/devices/${bob.id}/inbound`, {
          admin: true,
          json: { from: '4915177780000', body: 'x' },
        })
      ).status,
    ).toBe(400);
  });

  it('an inbound message or receipt reported twice is recorded once', async () => {
    const sink = new StoreMessageSink(gateway.store, outboxReceipts(gateway.store));
    const message = {
      waMessageId: '3EB0FFFF0001',
      from: '4915177788899',
      type: 'text' as const,
      body: 'twice',
      timestamp: 1_700_000_000,
    };
    await sink.received('dup-device', message);
    await sink.received('dup-device', message);
    await sink.receipt('dup-device', {
      waMessageId: '3EB0FFFF0001',
      status: 'delivered',
      recipient: '4915177788899',
      timestamp: 1_700_000_001,
    });
    await sink.receipt('dup-device', {
      waMessageId: '3EB0FFFF0001',
      status: 'delivered',
      recipient: '4915177788899',
      timestamp: 1_700_000_001,
    });
    await sink.receipt('dup-device', {
      waMessageId: '3EB0FFFF0001',
      status: 'read',
      recipient: '4915177788899',
      timestamp: 1_700_000_002,
    });
    expect(await gateway.store.readStream(inboxStream('dup-device'))).toHaveLength(1);
    expect(
      (await gateway.store.readStream(outboxStream('dup-device'))).map(
        (e) => (e.data as MessageStatusChangedData).status,
      ),
    ).toEqual(['delivered', 'read']);
  });
});
