/**
 * Labels (WhatsApp Business) on the sandbox over HTTP: the phone makes labels and puts them on chats
 * (POST /sandbox/devices/:id/labels, src/http/routes/sandbox-labels.ts); GET /labels, the chat view's `labels`
 * and GET /chats?label= show them. Real gateway, SQLite, HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxDevice, createDevice, goOnline } from '../../outbox/support/sandbox-devices.js';
import { eventually } from '../../support/eventually.js';
import { type Api, startTestGateway } from '../../support/gateway.js';

const ALICE = '4915100037772';
const BOB = '4915100038884';
const CAROL = '4915100039996';

describe('labels (sandbox)', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let alice: SandboxDevice;

  beforeAll(async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox' });
    api = gateway.api;
    alice = await createDevice(api, 'alice', ALICE);
    await goOnline(api, alice);
  });
  afterAll(async () => {
    await gateway.close();
  });

  const call = (method: string, path: string) => api(method, `/devices/${alice.id}${path}`, { deviceKey: alice.key });
  const phone = (json: unknown) => api('POST', `/sandbox/devices/${alice.id}/labels`, { admin: true, json });
  const inbound = async (from: string) => {
    const answer = await api('POST', `/sandbox/devices/${alice.id}/inbound`, {
      admin: true,
      json: { from, body: 'hi' },
    });
    expect(answer.status).toBe(202);
    await eventually(
      async () => ((await call('GET', '/chats')).body.items.some((c: any) => c.chatId === from) ? true : undefined),
      from,
    );
  };
  const chatIds = async (query: string) =>
    (await call('GET', `/chats${query}`)).body.items.map((c: { chatId: string }) => c.chatId).sort();

  it('shows the labels the phone made and put on chats, and filters chats by one', async () => {
    await inbound(BOB);
    await inbound(CAROL);
    expect((await call('GET', '/labels')).body).toEqual({ items: [] });

    const made = await phone({
      labels: [
        { labelId: '1', name: 'New customer', color: 2 },
        { labelId: '2', name: 'Paid' },
      ],
      chats: [
        { chatId: BOB, labelId: '1', action: 'add' },
        { chatId: BOB, labelId: '2', action: 'add' },
        { chatId: CAROL, labelId: '2', action: 'add' },
      ],
    });
    expect(made.status).toBe(202);
    // Recorded one change after another: the last one (label 2 on carol) says all are there.
    await eventually(async () => ((await chatIds('?label=2')).length === 2 ? true : undefined), 'label 2 on carol');
    expect((await call('GET', '/labels')).body).toEqual({
      items: [
        { labelId: '1', name: 'New customer', color: 2 },
        { labelId: '2', name: 'Paid', color: 0 },
      ],
    });
    expect(await chatIds('?label=1')).toEqual([BOB]);
    expect(await chatIds('?label=2')).toEqual([BOB, CAROL]);
    const bob = (await call('GET', '/chats')).body.items.find((c: any) => c.chatId === BOB);
    expect(bob.labels).toEqual(['1', '2']);

    // Taken off a chat, and a label deleted.
    expect(
      (
        await phone({
          labels: [{ labelId: '1', name: 'New customer', color: 2, deleted: true }],
          chats: [{ chatId: CAROL, labelId: '2', action: 'remove' }],
        })
      ).status,
    ).toBe(202);
    await eventually(async () => ((await chatIds('?label=2')).length === 1 ? true : undefined), 'label 2 off carol');
    expect(await chatIds('?label=2')).toEqual([BOB]);
    expect((await call('GET', '/labels')).body.items.map((l: any) => l.labelId)).toEqual(['2']);
  });

  it('refuses bad input with a 400 and changes nothing', async () => {
    expect((await phone({ labels: [{ labelId: 'bad id!', name: 'x' }] })).status).toBe(400);
    expect((await phone({ chats: [{ chatId: BOB, labelId: '2', action: 'toggle' }] })).status).toBe(400);
    expect((await phone({ labels: [{ labelId: '3', name: 'x', color: 20 }] })).status).toBe(400);
    expect((await call('GET', '/labels')).body.items.map((l: any) => l.labelId)).toEqual(['2']);
    expect((await api('GET', '/devices/nobody/labels', { admin: true })).status).toBe(404);
  });
});
