/**
 * Read-your-writes on the read side (src/projections/read-barrier.ts), against a real gateway on a SQLite file: a send
 * is answered at its commit while the read models lag, and a query made after its 202 waits until they include it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTestGateway } from '../support/gateway.js';
import { eventually } from '../support/eventually.js';

const TO = '4915112345678';

describe('read-your-writes with the projector behind', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>> | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it('answers a send without waiting for the read models, and a read after it waits until they include it', async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox' });
    const { api, projections } = gateway;
    const key = (await api('POST', '/devices', { admin: true, json: { id: 'shop', name: 'Shop' } })).body.deviceKey;
    // The projector stops: nothing reaches the read models until it starts again.
    await projections.stop();
    const settle = vi.spyOn(projections, 'settle');
    const sent = await api('POST', '/devices/shop/send/text', { deviceKey: key, json: { to: TO, text: 'hello' } });
    expect(sent.status).toBe(202);
    // Answered at its commit: it never waited for the read models.
    expect(settle).not.toHaveBeenCalled();
    const read = api('GET', `/devices/shop/messages/${sent.body.waMessageId}`, { deviceKey: key });
    // The read waits for the log's head (the send): the read models do not hold it yet.
    const waiting = (projections as unknown as { waiters: unknown[] }).waiters;
    await eventually(() => waiting.length === 1, 'the read waiting for the read models');
    await projections.start();
    const answer = await read;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ waMessageId: sent.body.waMessageId, fromMe: true, body: 'hello' });
  });

  it('answers a reply only once the read models hold the message it replies to', async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox' });
    const { api, projections } = gateway;
    const key = (await api('POST', '/devices', { admin: true, json: { id: 'shop', name: 'Shop' } })).body.deviceKey;
    await projections.stop();
    const first = await api('POST', '/devices/shop/send/text', { deviceKey: key, json: { to: TO, text: 'one' } });
    expect(first.status).toBe(202);
    // A reply reads the message index: it waits for the first send to be in it, instead of answering 404.
    const reply = api('POST', '/devices/shop/send/text', {
      deviceKey: key,
      json: { to: TO, text: 'two', replyTo: first.body.waMessageId },
    });
    const waiting = (projections as unknown as { waiters: unknown[] }).waiters;
    await eventually(() => waiting.length === 1, 'the reply waiting for the read models');
    await projections.start();
    expect((await reply).status).toBe(202);
  });
});
