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

  it('a message the server never acknowledges is reported as transient, ping answers or not (issue 35)', async () => {
    const { connection, events, socket } = await h.online();
    const keepAlive = setInterval(() => socket.frame(), 5);
    try {
      await connection.send({ waMessageId: 'ACKED', to: PEER, content: { kind: 'text', text: 'one' } });
      // The socket shows it reports acknowledgements: from now on one that does not come counts.
      socket.ws.emit('CB:ack,class:message', { tag: 'ack', attrs: { id: 'ACKED', class: 'message' } });
      await connection.send({ waMessageId: 'LOST', to: PEER, content: { kind: 'text', text: 'two' } });
      await eventually(() => events.disconnects.length === 1, 'the deaf connection reported');
      expect(events.disconnects[0]).toEqual({ kind: 'transient', detail: expect.stringMatching(/acknowledgement/) });
      expect(socket.endedWith).toHaveLength(1);
    } finally {
      clearInterval(keepAlive);
    }
  });

  it('stays online while each message sent is acknowledged, and never judges a socket that showed no acknowledgement', async () => {
    // Every socket brought online answers pings from then on: only acknowledgements differ.
    const sockets: Array<{ frame(): void }> = [];
    const keepAlive = setInterval(() => sockets.forEach((socket) => socket.frame()), 5);
    const online = async (deviceId: string) => {
      const device = await h.online(deviceId);
      sockets.push(device.socket);
      return device;
    };
    const ack = (device: Awaited<ReturnType<typeof online>>, id: string) =>
      device.socket.ws.emit('CB:ack,class:message', { tag: 'ack', attrs: { id, class: 'message' } });
    const send = (device: Awaited<ReturnType<typeof online>>, id: string) =>
      device.connection.send({ waMessageId: id, to: PEER, content: { kind: 'text', text: id } });
    try {
      // Acknowledges everything it sends.
      const acked = await online('dev-1');
      for (const id of ['A1', 'A2', 'A3']) {
        await send(acked, id);
        ack(acked, id);
      }
      // Sends, but never shows one acknowledgement.
      const unshown = await online('dev-2');
      await send(unshown, 'U1');
      // A message unacknowledged after a first acknowledgement: once this one is dropped, the two above have been
      // watched past the limit too.
      const deaf = await online('dev-3');
      await send(deaf, 'D1');
      ack(deaf, 'D1');
      await send(deaf, 'D2');
      await eventually(() => deaf.events.disconnects.length === 1, 'the deaf connection reported');
      expect(acked.events.disconnects).toEqual([]);
      expect(unshown.events.disconnects).toEqual([]);
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
