/**
 * The sandbox as WhatsApp's multi-device works: a message an account sends reaches its other linked devices
 * as sent by the account (`fromMe`, in the chat with the recipient), and recipients get the sender's profile
 * name as `pushName` (which names the chat). Neither could be produced in the sandbox before. Its edits and
 * deletions for everyone reach them too, as made by the account, in one-to-one chats and in groups.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxDevice, createDevice, goOnline } from '../../outbox/support/sandbox-devices.js';
import { eventually } from '../../support/eventually.js';
import { startTestGateway } from '../../support/gateway.js';

const ALICE = '4915100006662';
const BOB = '4915100006664';

describe('sandbox: an account with two linked devices', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let alice: SandboxDevice;
  let twin: SandboxDevice;
  let bob: SandboxDevice;
  const call = (device: SandboxDevice, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, json?: unknown) =>
    gateway.api(method, `/devices/${device.id}${path}`, {
      deviceKey: device.key,
      ...(json === undefined ? {} : { json }),
    });

  beforeAll(async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox', OUTBOX_SPACING: '0ms' });
    alice = await createDevice(gateway.api, 'alice', ALICE);
    twin = await createDevice(gateway.api, 'alice-twin', ALICE);
    bob = await createDevice(gateway.api, 'bob', BOB);
    for (const device of [alice, twin, bob]) await goOnline(gateway.api, device);
  });
  afterAll(async () => {
    await gateway.close();
  });

  it("the account's other device gets what it sends as fromMe; the recipient gets its name", async () => {
    expect((await call(alice, 'PATCH', '/profile', { name: 'Alice' })).status).toBe(200);
    const sent = await call(alice, 'POST', '/send/text', { to: BOB, text: 'hello from the phone' });
    expect(sent.status).toBe(202);
    const { waMessageId } = sent.body as { waMessageId: string };

    const onTwin = await eventually(async () => {
      const answer = await call(twin, 'GET', `/messages/${waMessageId}`);
      return answer.status === 200 ? answer.body : undefined;
    }, 'the message on the twin');
    expect(onTwin).toMatchObject({ waMessageId, chatId: BOB, fromMe: true, body: 'hello from the phone' });
    expect((await call(twin, 'GET', '/chats')).body.items).toEqual([
      expect.objectContaining({ chatId: BOB, unreadCount: 0 }),
    ]);

    const onBob = await eventually(async () => {
      const chats = (await call(bob, 'GET', '/chats')).body.items as Array<{ chatId: string; name?: string }>;
      return chats.length > 0 ? chats : undefined;
    }, 'the chat on bob');
    expect(onBob).toEqual([expect.objectContaining({ chatId: ALICE, name: 'Alice', unreadCount: 1 })]);
    expect((await call(bob, 'GET', `/messages/${waMessageId}`)).body).toMatchObject({ fromMe: false, chatId: ALICE });
  });

  /** The message as `device` shows it once `done` holds. */
  const shownOn = (
    device: SandboxDevice,
    waMessageId: string,
    done: (message: { body: string; status?: string; edited: boolean; revoked: boolean }) => boolean,
  ) =>
    eventually(async () => {
      const answer = await call(device, 'GET', `/messages/${waMessageId}`);
      return answer.status === 200 && done(answer.body) ? answer.body : undefined;
    }, `${waMessageId} on ${device.id}`);

  it.each([
    ['a one-to-one chat', async () => BOB],
    [
      'a group',
      async () => {
        const group = await gateway.api('POST', '/sandbox/groups', {
          admin: true,
          json: { subject: 'Twins', members: [ALICE, BOB] },
        });
        expect(group.status).toBe(201);
        return group.body.groupId as string;
      },
    ],
  ])("the account's edits and deletions reach its other device as its own, in %s", async (_, chatOf) => {
    const to = await chatOf();
    const sent = await call(alice, 'POST', '/send/text', { to, text: 'first words' });
    expect(sent.status).toBe(202);
    const { waMessageId } = sent.body as { waMessageId: string };
    // Edits and deletions for everyone are for sent messages.
    await shownOn(alice, waMessageId, (m) => m.status !== 'queued' && m.status !== 'sending');
    await shownOn(twin, waMessageId, () => true);

    expect((await call(alice, 'PATCH', `/send/${waMessageId}`, { text: 'better words' })).status).toBe(202);
    for (const device of [twin, bob])
      expect(await shownOn(device, waMessageId, (m) => m.edited)).toMatchObject({ body: 'better words', edited: true });

    expect((await call(alice, 'DELETE', `/send/${waMessageId}`)).status).toBe(202);
    // The twin has it in the chat with the recipient; bob in the chat with alice (or in the group).
    expect(await shownOn(twin, waMessageId, (m) => m.revoked)).toMatchObject({
      chatId: to,
      fromMe: true,
      body: '',
      revoked: true,
    });
    expect(await shownOn(bob, waMessageId, (m) => m.revoked)).toMatchObject({
      chatId: to === BOB ? ALICE : to,
      fromMe: false,
      body: '',
      revoked: true,
    });
  });
});
