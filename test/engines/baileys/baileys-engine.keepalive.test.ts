/**
 * The Baileys engine through a fake socket (support/fake-socket-engine.ts). Honest state: a dead keepalive
 * or a silently dropped socket is reported, a live one is not.
 */
import { describe, expect, it } from 'vitest';
import { PEER, useFakeSocketEngine } from './support/fake-socket-engine.js';
import { eventually } from '../../support/eventually.js';

const h = useFakeSocketEngine({ keepAliveIntervalMs: 40, keepAliveGraceMs: 60 });

describe('Baileys engine (fake socket): honest state', () => {
  it('a dead keepalive (no frame for too long) is reported as transient at once, and the socket is ended', async () => {
    const { events, socket } = await h.online();
    // The WebSocket stays "open" but nothing arrives anymore: no ping answers.
    await eventually(() => events.disconnects.length === 1);
    expect(events.disconnects[0]).toEqual({ kind: 'transient', detail: expect.stringMatching(/keepalive/) });
    expect(socket.endedWith).toHaveLength(1);
    expect(events.log).toEqual(['online', 'disconnected:transient']); // Baileys' own late close adds nothing
  });

  it('a silently dropped socket is reported as transient', async () => {
    const { events, socket } = await h.online();
    const keepAlive = setInterval(() => socket.frame(), 5);
    try {
      socket.ws.isOpen = false; // no close event from Baileys
      await eventually(() => events.disconnects.length === 1);
      expect(events.disconnects[0]).toEqual({ kind: 'transient', detail: expect.stringMatching(/no longer open/) });
    } finally {
      clearInterval(keepAlive);
    }
  });

  it('stays online while ping answers keep arriving', async () => {
    const { events, socket } = await h.online();
    const keepAlive = setInterval(() => socket.frame(), 5);
    try {
      // A second device whose socket stays silent, connected later: once the watchdog gave up on it, it has
      // watched the first one at least as long (past the silence limit).
      const silent = await h.online('dev-2');
      await eventually(() => silent.events.disconnects.length > 0, 'the silent socket dropped');
      expect(silent.events.disconnects).toEqual([{ kind: 'transient', detail: expect.stringMatching(/keepalive/) }]);
      expect(events.disconnects).toEqual([]);
    } finally {
      clearInterval(keepAlive);
    }
  });

  it('commands fail with not_connected once the connection is lost', async () => {
    const { connection, events, socket } = await h.online();
    socket.closeWith(428);
    await eventually(() => events.disconnects.length === 1);
    await expect(
      connection.send({ waMessageId: 'ID1', to: PEER, content: { kind: 'text', text: 'x' } }),
    ).rejects.toMatchObject({
      code: 'not_connected',
      permanent: false,
    });
  });
});
