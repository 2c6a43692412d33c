/**
 * The Baileys engine through a fake socket: a presence subscription is Baileys' presenceSubscribe on the
 * contact's JID; a contact going offline is reported with its last-seen time.
 */
import { describe, expect, it } from 'vitest';
import { PEER, PEER_JID, useFakeSocketEngine } from './support/fake-socket-engine.js';
import { eventually } from '../../support/eventually.js';

const h = useFakeSocketEngine();

describe('Baileys engine (fake socket): presence of contacts', () => {
  it('subscribes with presenceSubscribe, and reports lastSeen with unavailable', async () => {
    const { connection, events, socket } = await h.online();
    await connection.subscribePresence!(PEER);
    expect(socket.presenceSubscriptions).toEqual([PEER_JID]);
    socket.emit('presence.update', {
      id: PEER_JID,
      presences: { [PEER_JID]: { lastKnownPresence: 'unavailable', lastSeen: 1_700_000_000 } },
    });
    socket.emit('presence.update', { id: PEER_JID, presences: { [PEER_JID]: { lastKnownPresence: 'available' } } });
    await eventually(() => events.activities.length === 2);
    expect(events.activities).toEqual([
      { kind: 'presence', chatId: PEER, from: PEER, state: 'unavailable', lastSeen: '2023-11-14T22:13:20.000Z' },
      { kind: 'presence', chatId: PEER, from: PEER, state: 'available' },
    ]);
  });
});
