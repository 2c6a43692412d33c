/**
 * The Baileys engine through a fake socket: linking by pairing code (requestPairingCode) instead of a QR.
 */
import { type AuthenticationCreds } from 'baileys';
import { describe, expect, it } from 'vitest';
import { ME, useFakeSocketEngine } from './support/fake-socket-engine.js';
import { recordingEvents } from './support/recording-events.js';
import { eventually } from '../../support/eventually.js';
import { TestClock } from '../../support/test-clock.js';

/** The pairing code's renewal runs on this clock: the test moves it on. */
const clock = new TestClock();
const h = useFakeSocketEngine({ qrTimeoutMs: 100, clock });

describe('Baileys engine (fake socket): pairing by code', () => {
  it('asks WhatsApp for a code for the number once codes are shown, reports it as ABCD-EFGH, and renews it', async () => {
    const events = recordingEvents();
    const connection = await h.engine.connect('dev-1', events);
    const socket = h.sockets.latest();
    // Before the connection shows codes, there is nothing to pair with.
    await expect(connection.requestPairingCode!('4915100000001')).rejects.toMatchObject({
      code: 'pairing_unavailable',
    });
    socket.showQr('2@ref');
    await connection.requestPairingCode!('4915100000001');
    expect(socket.pairingRequests).toEqual(['4915100000001']);
    expect(events.pairingCodes[0].code).toBe('PAIR-0001');
    // Renewed every three QR lifetimes (300 ms here).
    await clock.advance(299);
    expect(events.pairingCodes).toHaveLength(1);
    await clock.advance(1);
    await eventually(() => events.pairingCodes.length >= 2, 'a second pairing code', 5_000);
    expect(events.pairingCodes[1].code).toBe('PAIR-0002');

    // The phone entered it: the same restart and stored account as after a scan.
    socket.pair(ME, 'Shop');
    await eventually(() => events.disconnects.length > 0, 'the restart');
    expect(events.disconnects).toEqual([{ kind: 'restart_required', detail: expect.stringContaining('515') }]);
    await eventually(async () => (await h.records().read<AuthenticationCreds>('creds'))?.me?.id === ME, 'stored creds');
    const renewals = events.pairingCodes.length;
    // No renewal once paired, however long.
    await clock.advance(1_200);
    expect(events.pairingCodes.length).toBe(renewals);
    expect(clock.pending()).toEqual([]);
  });

  it('refuses to pair a connection that is online', async () => {
    const { connection } = await h.online();
    await expect(connection.requestPairingCode!('4915100000001')).rejects.toMatchObject({
      code: 'pairing_unavailable',
    });
  });
});
