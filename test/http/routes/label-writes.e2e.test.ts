/**
 * Label writes of a WhatsApp Business account on the sandbox over HTTP: POST/PATCH/DELETE /labels and
 * PUT/DELETE /chats/:chatId/labels/:labelId (src/chats/label-commands.ts), each delivered as `label.updated` or
 * `chat.labels`, like the phone's own changes; bad input (400, 404, 409 for an account that is not a business one);
 * and the read models equal after a rebuild. Real gateway, SQLite, HTTP, webhook receiver.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ProjectionRunner } from '../../../src/projections/projection-runner.js';
import { openReadModelDb } from '../../../src/projections/read-model-db.js';
import { allProjections } from '../../../src/read-models.js';
import { type SandboxDevice, goOffline, stateOf } from '../../outbox/support/sandbox-devices.js';
import { eventually } from '../../support/eventually.js';
import { useSandboxWorld } from '../../support/sandbox-world.js';

const SHOP = '4915100047772';
const PLAIN = '4915100047773';
const BOB = '4915100048884';
const CAROL = '4915100049996';

describe('label writes (sandbox, WhatsApp Business)', () => {
  const world = useSandboxWorld({
    env: { DEFAULT_ENGINE: 'sandbox' },
    online: { shop: { phone: SHOP, business: true }, plain: PLAIN },
    hookEvents: ['label.updated', 'chat.labels'],
    hooked: ['shop'],
  });
  const { api, call } = world;
  const { shop, plain } = world.devices;

  const inbound = async (device: SandboxDevice, from: string) => {
    const answer = await api('POST', `/sandbox/devices/${device.id}/inbound`, {
      admin: true,
      json: { from, body: 'hi' },
    });
    expect(answer.status).toBe(202);
    await eventually(
      async () =>
        (await call(device, 'GET', '/chats')).body.items.some((c: any) => c.chatId === from) ? true : undefined,
      from,
    );
  };
  const chatIds = async (query: string) =>
    (await call(shop, 'GET', `/chats${query}`)).body.items.map((c: { chatId: string }) => c.chatId).sort();
  const webhook = (event: string, data: Record<string, unknown>) =>
    eventually(
      () =>
        world.receiver.requests.find(
          (r) =>
            r.envelope.event === event &&
            JSON.stringify(r.envelope.data) === JSON.stringify({ deviceId: shop.id, ...data }),
        )?.envelope,
      `webhook ${event} ${JSON.stringify(data)}`,
    );

  it('makes, renames and deletes labels, and puts them on chats and off; each is delivered as a webhook', async () => {
    await inbound(shop, BOB);
    await inbound(shop, CAROL);

    const made = await call(shop, 'POST', '/labels', { name: 'New customer', color: 2 });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({ labelId: '1', name: 'New customer', color: 2 });
    const paid = await call(shop, 'POST', '/labels', { name: 'Paid' });
    expect(paid.body).toEqual({ labelId: '2', name: 'Paid', color: 0 });
    await webhook('label.updated', { labelId: '1', name: 'New customer', color: 2, deleted: false });

    const renamed = await call(shop, 'PATCH', '/labels/1', { name: 'Lead' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ labelId: '1', name: 'Lead', color: 2 });
    await webhook('label.updated', { labelId: '1', name: 'Lead', color: 2, deleted: false });
    expect((await call(shop, 'GET', '/labels')).body).toEqual({
      items: [
        { labelId: '1', name: 'Lead', color: 2 },
        { labelId: '2', name: 'Paid', color: 0 },
      ],
    });

    const labelled = await call(shop, 'PUT', `/chats/${BOB}/labels/1`);
    expect(labelled.status).toBe(200);
    expect(labelled.body).toMatchObject({ chatId: BOB, labels: ['1'] });
    await webhook('chat.labels', { chatId: BOB, labelId: '1', action: 'add' });
    // Twice: the same answer, and nothing recorded (so no second chat.labels).
    const again = await call(shop, 'PUT', `/chats/${BOB}/labels/1`);
    expect(again.status).toBe(200);
    expect(again.body.labels).toEqual(['1']);
    const changes = (await world.gateway.store.readStream(`inbox-${shop.id}`)).filter(
      (e) => e.type === 'ChatLabelChanged',
    );
    expect(changes.map((e) => e.data)).toEqual([{ deviceId: shop.id, chatId: BOB, labelId: '1', action: 'add' }]);
    expect((await call(shop, 'PUT', `/chats/${CAROL}/labels/2`)).body.labels).toEqual(['2']);
    expect((await call(shop, 'PUT', `/chats/${BOB}/labels/2`)).body.labels).toEqual(['1', '2']);
    expect(await chatIds('?label=2')).toEqual([BOB, CAROL]);

    const unlabelled = await call(shop, 'DELETE', `/chats/${BOB}/labels/1`);
    expect(unlabelled.status).toBe(200);
    expect(unlabelled.body.labels).toEqual(['2']);
    await webhook('chat.labels', { chatId: BOB, labelId: '1', action: 'remove' });
    expect(await chatIds('?label=1')).toEqual([]);

    // Deleting a label takes it off its chats first, as the phone does.
    const deleted = await call(shop, 'DELETE', '/labels/2');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ labelId: '2', deleted: true });
    await webhook('chat.labels', { chatId: CAROL, labelId: '2', action: 'remove' });
    await webhook('label.updated', { labelId: '2', name: 'Paid', color: 0, deleted: true });
    expect(await chatIds('?label=2')).toEqual([]);
    expect((await call(shop, 'GET', '/labels')).body.items.map((l: any) => l.labelId)).toEqual(['1']);
    // A deleted label's id is not given again.
    expect((await call(shop, 'POST', '/labels', { name: 'VIP', color: 19 })).body.labelId).toBe('3');
  });

  it("delivers the phone's own label changes as the same webhooks", async () => {
    const phone = await api('POST', `/sandbox/devices/${shop.id}/labels`, {
      admin: true,
      json: {
        labels: [{ labelId: '40', name: 'From the phone', color: 5 }],
        chats: [{ chatId: CAROL, labelId: '40', action: 'add' }],
      },
    });
    expect(phone.status).toBe(202);
    await webhook('label.updated', { labelId: '40', name: 'From the phone', color: 5, deleted: false });
    await webhook('chat.labels', { chatId: CAROL, labelId: '40', action: 'add' });
    // The next label made here comes after the phone's.
    expect((await call(shop, 'POST', '/labels', { name: 'Next' })).body.labelId).toBe('41');
    // Made at once, each gets an id of its own.
    const together = await Promise.all(['A', 'B', 'C'].map((name) => call(shop, 'POST', '/labels', { name })));
    expect(together.map((a) => a.body.labelId).sort()).toEqual(['42', '43', '44']);
  });

  it('refuses an account that is not a business one, unknown labels and chats, and bad shapes', async () => {
    await inbound(plain, BOB);
    const notBusiness = [
      await call(plain, 'POST', '/labels', { name: 'x' }),
      await call(plain, 'PATCH', '/labels/1', { name: 'x' }),
      await call(plain, 'DELETE', '/labels/1'),
      await call(plain, 'PUT', `/chats/${BOB}/labels/1`),
      await call(plain, 'DELETE', `/chats/${BOB}/labels/1`),
    ];
    expect(notBusiness.map((a) => [a.status, a.body.code])).toEqual(
      Array.from({ length: 5 }, () => [409, 'not_business_account']),
    );

    const unknown = [
      await call(shop, 'PATCH', '/labels/77', { name: 'x' }),
      await call(shop, 'DELETE', '/labels/77'),
      await call(shop, 'PUT', `/chats/${BOB}/labels/77`),
      await call(shop, 'DELETE', `/chats/${BOB}/labels/2`), // deleted above
    ];
    expect(unknown.map((a) => [a.status, a.body.code])).toEqual(
      Array.from({ length: 4 }, () => [404, 'label_not_found']),
    );
    const noChat = await call(shop, 'PUT', '/chats/4915100040000/labels/1');
    expect([noChat.status, noChat.body.code]).toEqual([404, 'chat_not_found']);

    const badShapes = [
      await call(shop, 'POST', '/labels', {}),
      await call(shop, 'POST', '/labels', { name: '' }),
      await call(shop, 'POST', '/labels', { name: 'x'.repeat(101) }),
      await call(shop, 'POST', '/labels', { name: 'x', color: 20 }),
      await call(shop, 'POST', '/labels', { name: 'x', extra: true }),
      await call(shop, 'PATCH', '/labels/1', {}),
      await call(shop, 'PATCH', '/labels/1', { color: -1 }),
      await call(shop, 'PUT', `/chats/${BOB}/labels/${encodeURIComponent('bad id!')}`),
    ];
    expect(badShapes.map((a) => [a.status, a.body.code])).toEqual(
      Array.from({ length: 8 }, () => [400, 'invalid_request']),
    );
    // Nothing of the refused requests was made.
    expect((await call(shop, 'GET', '/labels')).body.items.map((l: any) => l.name).sort()).toEqual([
      'A',
      'B',
      'C',
      'From the phone',
      'Lead',
      'Next',
      'VIP',
    ]);

    // Labels need the connection: a closed session is refused before anything is asked of the account.
    await goOffline(api, plain);
    await eventually(async () => ((await stateOf(api, plain)) !== 'online' ? true : undefined), 'plain offline');
    const offline = await call(plain, 'POST', '/labels', { name: 'x' });
    expect([offline.status, offline.body.code]).toEqual([409, 'session_not_online']);

    const reader = await call(shop, 'POST', '/keys', { name: 'reader', scopes: ['read'] });
    expect(reader.status).toBe(201);
    const readOnly = await api('POST', `/devices/${shop.id}/labels`, {
      deviceKey: reader.body.key,
      json: { name: 'x' },
    });
    expect([readOnly.status, readOnly.body.code, readOnly.body.requiredScope]).toEqual([
      403,
      'insufficient_scope',
      'manage',
    ]);
  });

  it('rebuilding the read models from position 0 gives the same labels and chats', async () => {
    const db = openReadModelDb(world.gateway.dataDir);
    const dump = () =>
      Object.fromEntries(
        ['chat_labels', 'chats', 'chat_messages'].map((t) => [
          t,
          db
            .prepare(`SELECT * FROM ${t}`)
            .all()
            .map((row) => JSON.stringify(row))
            .sort(),
        ]),
      );
    await world.gateway.webhooks.stop();
    const before = dump();
    expect(before.chat_labels.length).toBeGreaterThan(3);
    const log = pino({ level: 'silent' });
    const runner = new ProjectionRunner(world.gateway.store, db, allProjections(db, world.gateway.store, log), log);
    await runner.rebuild();
    await runner.stop();
    expect(dump()).toEqual(before);
    db.close();
  });
});
