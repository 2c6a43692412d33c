/**
 * The outbox through the real Baileys engine against a local WhatsApp server (crabline): a queued text
 * is drained and reaches the server under the waMessageId the outbox assigned when it was queued.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BaileysEngine, createBaileysEngine } from '../../src/engines/baileys/baileys-engine.js';
import type { EngineConnection } from '../../src/engines/engine.js';
import { type Crabline, seedLinkedCreds, startCrabline } from '../engines/baileys/support/crabline.js';
import { recordingEvents } from '../engines/baileys/support/recording-events.js';
import { type Harness, outboxHarness, text } from './support/harness.js';
import { eventually } from '../support/eventually.js';

describe('sending through Baileys (crabline as WhatsApp)', () => {
  let h: Harness;
  let crabline: Crabline;
  let engine: BaileysEngine;
  let connection: EngineConnection;

  beforeAll(async () => {
    h = await outboxHarness();
    crabline = await startCrabline(h.dir);
    await seedLinkedCreds(h.store, 'shop-1', crabline.selfJid);
    // crabline answers no onWhatsApp lookup: recipients are not verified here.
    engine = createBaileysEngine({
      store: h.store,
      socketUrl: crabline.socketUrl,
      logger: pino({ level: 'silent' }),
      verifyRecipients: false,
    });
    const events = recordingEvents();
    connection = await engine.connect('shop-1', events);
    await eventually(() => events.onlines.length === 1, 'online at crabline', 20_000);
  });

  afterAll(async () => {
    await h?.drainer.stop();
    await connection?.close();
    await engine?.close();
    await crabline?.close();
    await h?.close();
  });

  it('sends a queued text with the waMessageId assigned when it was queued', async () => {
    const queued = await h.queue('shop-1', text('hello through the outbox'), '15551234567');
    h.connections.online('shop-1', connection);
    h.drainer.start(['shop-1']);
    await eventually(
      () => crabline.acceptedSends().some((s) => s.id === queued.waMessageId),
      'the send at crabline',
      20_000,
    );
    expect(crabline.acceptedSends()).toContainEqual({
      id: queued.waMessageId,
      to: '15551234567@s.whatsapp.net',
      text: 'hello through the outbox',
    });
    await eventually(async () => (await h.statuses('shop-1')).some((s) => s.status === 'sent'), 'recorded sent');
    expect((await h.statuses('shop-1'))[0]).toMatchObject({
      waMessageId: queued.waMessageId,
      status: 'sent',
      recipient: '15551234567',
    });
  });
});
