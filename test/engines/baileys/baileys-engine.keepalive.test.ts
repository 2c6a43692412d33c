/**
 * The Baileys engine through a fake socket (support/fake-socket-engine.ts). Honest state: a dead keepalive
 * or a silently dropped socket is reported, a live one is not.
 */
import { describe, expect, it } from 'vitest';
import { PEER, useFakeSocketEngine } from './support/fake-socket-engine.js';
import { eventually } from '../../support/eventually.js';
import { TestClock } from '../../support/test-clock.js';

/** The watchdog runs on this clock: the tests move it on, so a slow machine cannot make a live socket look dead. */
const clock = new TestClock();
/** Silent past 100 ms (interval + grace) is dead; the watchdog looks every 20 ms. */
const h = useFakeSocketEngine({ keepAliveIntervalMs: 40, keepAliveGraceMs: 60, clock });

/** Moves time on in steps of 50 ms, `frames` (the ping answers that arrive) before each step. */
async function passTime(steps: number, frames: () => void = () => undefined): Promise<void> {
  for (let step = 0; step < steps; step++) {
    frames();
    await clock.advance(50);
  }
}

describe('Baileys engine (fake socket): honest state', () => {
  it('a dead keepalive (no frame for too long) is reported as transient at once, and the socket is ended', async () => {
    const { events, socket } = await h.online();
    // The WebSocket stays "open" but nothing arrives anymore: no ping answers.
    await clock.advance(100);
    expect(events.disconnects).toEqual([]);
    await clock.advance(20);
    expect(events.disconnects).toEqual([{ kind: 'transient', detail: expect.stringMatching(/keepalive/) }]);
    expect(socket.endedWith).toHaveLength(1);
    expect(events.log).toEqual(['online', 'disconnected:transient']); // Baileys' own late close adds nothing
  });

  it('a silently dropped socket is reported as transient', async () => {
    const { events, socket } = await h.online();
    socket.ws.isOpen = false; // no close event from Baileys
    await clock.advance(20);
    expect(events.disconnects).toEqual([{ kind: 'transient', detail: expect.stringMatching(/no longer open/) }]);
  });

  it('stays online while ping answers keep arriving', async () => {
    const { events, socket } = await h.online();
    const silent = await h.online('dev-2');
    await passTime(10, () => socket.frame());
    expect(silent.events.disconnects).toEqual([{ kind: 'transient', detail: expect.stringMatching(/keepalive/) }]);
    expect(events.disconnects).toEqual([]);
  });

  it('a message the server never acknowledges is reported as transient, ping answers or not (issue 35)', async () => {
    const { connection, events, socket } = await h.online();
    await connection.send({ waMessageId: 'ACKED', to: PEER, content: { kind: 'text', text: 'one' } });
    // The socket shows it reports acknowledgements: from now on one that does not come counts.
    socket.ws.emit('CB:ack,class:message', { tag: 'ack', attrs: { id: 'ACKED', class: 'message' } });
    await connection.send({ waMessageId: 'LOST', to: PEER, content: { kind: 'text', text: 'two' } });
    // Twice the keepalive limit (200 ms) with ping answers all along.
    await passTime(4, () => socket.frame());
    expect(events.disconnects).toEqual([]);
    await passTime(1, () => socket.frame());
    expect(events.disconnects).toEqual([{ kind: 'transient', detail: expect.stringMatching(/acknowledgement/) }]);
    expect(socket.endedWith).toHaveLength(1);
  });

  it('stays online while each message sent is acknowledged, and never judges a socket that showed no acknowledgement', async () => {
    type Online = Awaited<ReturnType<typeof h.online>>;
    const ack = (device: Online, id: string) =>
      device.socket.ws.emit('CB:ack,class:message', { tag: 'ack', attrs: { id, class: 'message' } });
    const send = (device: Online, id: string) =>
      device.connection.send({ waMessageId: id, to: PEER, content: { kind: 'text', text: id } });
    // Acknowledges everything it sends.
    const acked = await h.online('dev-1');
    for (const id of ['A1', 'A2', 'A3']) {
      await send(acked, id);
      ack(acked, id);
    }
    // Sends, but never shows one acknowledgement.
    const unshown = await h.online('dev-2');
    await send(unshown, 'U1');
    // A message unacknowledged after a first acknowledgement: the one that must be judged.
    const deaf = await h.online('dev-3');
    await send(deaf, 'D1');
    ack(deaf, 'D1');
    await send(deaf, 'D2');
    // Every socket answers pings all along: only acknowledgements differ.
    await passTime(10, () => [acked, unshown, deaf].forEach((device) => device.socket.frame()));
    expect(deaf.events.disconnects).toEqual([{ kind: 'transient', detail: expect.stringMatching(/acknowledgement/) }]);
    expect(acked.events.disconnects).toEqual([]);
    expect(unshown.events.disconnects).toEqual([]);
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
