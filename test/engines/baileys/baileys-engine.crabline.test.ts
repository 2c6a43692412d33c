/**
 * Real Baileys against a local WhatsApp server (crabline): connect with stored, already linked
 * credentials to `open`, send a text with our own waMessageId, receive an injected text.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BaileysEngine, createBaileysEngine } from '../../../src/engines/baileys/baileys-engine.js';
import { newWaMessageId, WA_MESSAGE_ID_PATTERN } from '../../../src/messages/message-id.js';
import type { EngineConnection } from '../../../src/engines/engine.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { tempDir } from '../../support/temp-dir.js';
import { type Crabline, seedLinkedCreds, startCrabline } from './support/crabline.js';
import { type RecordingEvents, recordingEvents } from './support/recording-events.js';
import { eventually } from '../../support/eventually.js';

describe('Baileys engine against a local WhatsApp server', () => {
  const dir = tempDir('dmg-baileys-');
  let crabline: Crabline;
  let store: SqliteEventStore;
  let engine: BaileysEngine;
  let events: RecordingEvents;
  let connection: EngineConnection;

  beforeAll(async () => {
    crabline = await startCrabline(dir);
    store = new SqliteEventStore(join(dir, 'events.sqlite'));
    await seedLinkedCreds(store, 'shop-1', crabline.selfJid);
    engine = createBaileysEngine({
      store,
      socketUrl: crabline.socketUrl,
      logger: pino({ level: 'silent' }),
      // crabline answers no onWhatsApp query (it drops the socket): the fake-socket tests cover the lookup.
      verifyRecipients: false,
    });
    events = recordingEvents();
    connection = await engine.connect('shop-1', events);
  });

  afterAll(async () => {
    await connection?.close();
    await engine?.close();
    await crabline?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports online with the linked account once the socket is open and authenticated', async () => {
    await eventually(() => events.onlines.length === 1);
    expect(events.onlines[0]).toEqual({ phone: crabline.selfPhone, jid: crabline.selfJid, name: 'Crabline Account' });
    expect(events.qrs).toEqual([]);
    expect(events.disconnects).toEqual([]);
  });

  it('sends a direct text with the waMessageId assigned when it was queued', async () => {
    const waMessageId = newWaMessageId(crabline.selfJid);
    expect(waMessageId).toMatch(WA_MESSAGE_ID_PATTERN);
    await connection.send({
      waMessageId,
      to: '15551234567',
      content: { kind: 'text', text: 'hello from the gateway' },
    });
    await eventually(() => crabline.acceptedSends().some((send) => send.id === waMessageId), 'the send at crabline');
    expect(crabline.acceptedSends()).toContainEqual({
      id: waMessageId,
      to: '15551234567@s.whatsapp.net',
      text: 'hello from the gateway',
    });
  });

  it('reports an injected text as an inbound message', async () => {
    const { id } = await crabline.injectText('15557654321', 'hi there', 'Alice');
    await eventually(() => events.inbounds.some((m) => m.waMessageId === id), 'the injected text');
    const inbound = events.inbounds.find((m) => m.waMessageId === id)!;
    expect(inbound).toEqual({
      waMessageId: id,
      from: '15557654321',
      chatId: '15557654321',
      isGroup: false,
      fromMe: false,
      type: 'text',
      body: 'hi there',
      pushName: 'Alice',
      timestamp: expect.any(Number),
    });
    expect(Math.abs(inbound.timestamp - Date.now() / 1000)).toBeLessThan(300);
  });

  it('reports a text with a URL as a link', async () => {
    const { id } = await crabline.injectText('15557654321', 'look at https://example.com/page');
    await eventually(() => events.inbounds.some((m) => m.waMessageId === id), 'the injected text');
    expect(events.inbounds.find((m) => m.waMessageId === id)).toMatchObject({
      type: 'link',
      body: 'look at https://example.com/page',
    });
  });

  it('keeps the session across close and connect: no QR, online again', async () => {
    await connection.close();
    const again = recordingEvents();
    connection = await engine.connect('shop-1', again);
    await eventually(() => again.onlines.length === 1);
    expect(again.qrs).toEqual([]);
    expect(events.disconnects).toEqual([]); // closing on request is not a disconnect
  });

  it('reports a server that goes away as a transient disconnect', async () => {
    const lost = recordingEvents();
    await connection.close();
    connection = await engine.connect('shop-1', lost);
    await eventually(() => lost.onlines.length === 1);
    await crabline.close();
    await eventually(() => lost.disconnects.length === 1);
    expect(lost.disconnects[0].kind).toBe('transient');
    expect(lost.log.at(-1)).toBe('disconnected:transient');
    await expect(
      connection.send({ waMessageId: newWaMessageId(), to: '15551234567', content: { kind: 'text', text: 'x' } }),
    ).rejects.toMatchObject({
      code: 'not_connected',
      permanent: false,
    });
  });
});
