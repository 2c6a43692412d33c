/**
 * Statuses (stories, API Part 3) with sandbox devices: a status is a send through the outbox (Idempotency-Key,
 * recorded before the answer) to `status@broadcast`; it reaches the sandbox devices of its audience (by default
 * the numbers the account exchanged messages with) as `status.received` (media downloaded like inbound media);
 * views (read receipts) fill GET /status's viewers; DELETE revokes it; no status is ever a chat.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useSandboxWorld } from '../support/sandbox-world.js';
import { eventually } from '../support/eventually.js';
import { outboxStream } from '../../src/messages/message-events.js';

const ALICE = '4915100000021';
const BOB = '4915100000022';
const CAROL = '4915100000023';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('statuses (sandbox)', () => {
  const world = useSandboxWorld({
    env: { SANDBOX_DELIVERED_DELAY_MS: '60000' },
    online: { alice: ALICE, bob: BOB, carol: CAROL },
    hookEvents: ['status.received', 'message.received'],
  });
  const { call, hooksOf } = world;
  const { alice, bob, carol } = world.devices;
  beforeAll(async () => {
    // Alice has exchanged messages with Bob only: her default audience.
    expect((await call(alice, 'POST', '/send/text', { to: BOB, text: 'hi Bob' })).status).toBe(202);
    await world.receiver.waitUntil(() => hooksOf(bob, 'message.received').length === 1);
  });

  it('posts a text status through the outbox to its default audience, who get status.received', async () => {
    const posted = await call(alice, 'POST', '/status/text', {
      text: 'Open on Sunday',
      backgroundColor: '#25D366',
      font: 2,
    });
    expect(posted.status).toBe(202);
    expect(posted.body).toMatchObject({ status: 'queued', waMessageId: expect.any(String) });
    const { waMessageId } = posted.body as { waMessageId: string };
    const queued = (await world.gateway.store.readStream(outboxStream(alice.id))).find(
      (e) => e.type === 'OutboxMessageQueued' && (e.data as { waMessageId: string }).waMessageId === waMessageId,
    );
    expect(queued?.data).toMatchObject({
      to: 'status@broadcast',
      audience: [BOB],
      content: { kind: 'text', text: 'Open on Sunday', backgroundColor: '#25D366', font: 2 },
    });

    await world.receiver.waitUntil(() => hooksOf(bob, 'status.received').some((s) => s.waMessageId === waMessageId));
    expect(hooksOf(bob, 'status.received').find((s) => s.waMessageId === waMessageId)).toEqual({
      deviceId: bob.id,
      from: ALICE,
      waMessageId,
      type: 'text',
      body: 'Open on Sunday',
      timestamp: expect.any(Number),
    });
    // Not in the audience; and a status is never a chat, nor a message.received.
    expect(hooksOf(carol, 'status.received')).toEqual([]);
    expect(hooksOf(bob, 'message.received').some((m) => m.waMessageId === waMessageId)).toBe(false);
    const chats = (await call(bob, 'GET', '/chats')).body.items as Array<{ chatId: string }>;
    expect(chats.map((c) => c.chatId)).toEqual([ALICE]);
    expect(((await call(alice, 'GET', '/chats')).body.items as Array<{ chatId: string }>).map((c) => c.chatId)).toEqual(
      [BOB],
    );
  });

  it('an image status reaches the audience named, with its media downloaded; an Idempotency-Key answers once', async () => {
    const headers = { 'idempotency-key': 'status-image-1' };
    const posted = await call(
      alice,
      'POST',
      '/status/image',
      { base64: PNG, caption: 'new', audience: [CAROL] },
      headers,
    );
    expect(posted.status).toBe(202);
    const again = await call(
      alice,
      'POST',
      '/status/image',
      { base64: PNG, caption: 'new', audience: [CAROL] },
      headers,
    );
    expect(again.body.waMessageId).toBe(posted.body.waMessageId);

    const { waMessageId } = posted.body as { waMessageId: string };
    await world.receiver.waitUntil(() => hooksOf(carol, 'status.received').some((s) => s.waMessageId === waMessageId));
    const received = hooksOf(carol, 'status.received').find((s) => s.waMessageId === waMessageId)!;
    expect(received).toMatchObject({ from: ALICE, type: 'image', body: 'new', media: { status: 'ready' } });
    const media = await world.gateway.api('GET', (received.media as { url: string }).url, { deviceKey: carol.key });
    expect(media.status).toBe(200);
    expect(hooksOf(bob, 'status.received').some((s) => s.waMessageId === waMessageId)).toBe(false);
  });

  it('views (read receipts) fill the viewers of GET /status, once per number', async () => {
    const posted = await call(alice, 'POST', '/status/text', { text: 'seen?', audience: [BOB, CAROL] });
    const { waMessageId } = posted.body as { waMessageId: string };
    await eventually(
      async () =>
        ((await call(alice, 'GET', '/status')).body.items as Array<{ waMessageId: string }>).some(
          (s) => s.waMessageId === waMessageId,
        ),
      'the status to be listed',
    );
    for (const from of [CAROL, CAROL, BOB]) {
      const viewed = await world.gateway.api('POST', `/sandbox/devices/${alice.id}/status-view`, {
        admin: true,
        json: { from, waMessageId },
      });
      expect(viewed.status).toBe(202);
    }
    await eventually(async () => {
      const items = (await call(alice, 'GET', '/status')).body.items as Array<{
        waMessageId: string;
        viewers: Array<{ number: string }>;
      }>;
      return items.find((s) => s.waMessageId === waMessageId)?.viewers.length === 2;
    }, 'two viewers');
    const listed = (await call(alice, 'GET', '/status')).body.items as Array<Record<string, unknown>>;
    expect(listed[0]).toMatchObject({ waMessageId, type: 'text', text: 'seen?' });
    expect((listed[0].viewers as Array<{ number: string }>).map((v) => v.number).sort()).toEqual([BOB, CAROL]);
    expect(listed.length).toBe(3);
  });

  it('deletes a status for everyone; unknown: 404', async () => {
    const posted = await call(alice, 'POST', '/status/text', { text: 'oops', audience: [BOB] });
    const { waMessageId } = posted.body as { waMessageId: string };
    await eventually(async () => {
      const answer = await call(alice, 'GET', `/messages/${waMessageId}`);
      if (answer.body.status !== 'sent') throw new Error(JSON.stringify(answer.body));
      return true;
    }, 'the status to be sent');
    const deleted = await call(alice, 'DELETE', `/status/${waMessageId}`);
    expect(deleted.status).toBe(202);
    await eventually(
      async () =>
        !((await call(alice, 'GET', '/status')).body.items as Array<{ waMessageId: string }>).some(
          (s) => s.waMessageId === waMessageId,
        ),
      'the status to be gone',
    );
    expect((await call(alice, 'DELETE', '/status/NOSUCHSTATUS')).status).toBe(404);
  });

  it('refuses bad input: an empty audience (422), and fields out of shape (400); nothing is queued', async () => {
    const before = (await world.gateway.store.readStream(outboxStream(carol.id))).length;
    // Carol has exchanged no messages: no default audience.
    const none = await call(carol, 'POST', '/status/text', { text: 'hello' });
    expect(none.status).toBe(422);
    expect(none.body.code).toBe('empty_audience');
    const empty = await call(alice, 'POST', '/status/text', { text: 'hello', audience: [] });
    expect(empty.status).toBe(422);
    expect(empty.body.code).toBe('empty_audience');
    for (const body of [
      { text: '' },
      { text: 'x'.repeat(701) },
      { text: 'x', backgroundColor: 'green' },
      { text: 'x', font: 10 },
      { text: 'x', audience: ['123'] },
      { text: 'x', to: BOB },
    ])
      expect((await call(carol, 'POST', '/status/text', body)).status).toBe(400);
    expect((await world.gateway.store.readStream(outboxStream(carol.id))).length).toBe(before);
  });
});
