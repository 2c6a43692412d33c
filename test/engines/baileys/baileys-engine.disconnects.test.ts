/**
 * The Baileys engine through a fake socket (support/fake-socket-engine.ts). Disconnects: every close code,
 * logouts by the phone and by us, forget, a second connect.
 */
import { type AuthenticationCreds } from 'baileys';
import { describe, expect, it } from 'vitest';
import { ME, PEER, useFakeSocketEngine } from './support/fake-socket-engine.js';
import { recordingEvents } from './support/recording-events.js';
import { eventually } from '../../support/eventually.js';

const h = useFakeSocketEngine();

describe('Baileys engine (fake socket): disconnects', () => {
  it.each([
    [515, 'restart_required'],
    [440, 'connection_replaced'],
    [408, 'transient'],
    [428, 'transient'],
    [500, 'transient'],
    [503, 'transient'],
    [undefined, 'transient'],
  ] as const)('close with %s is reported as %s, and the credentials stay', async (code, kind) => {
    const { events, socket } = await h.online();
    socket.closeWith(code);
    await eventually(() => events.disconnects.length === 1);
    expect(events.disconnects[0].kind).toBe(kind);
    expect(events.log).toEqual(['online', `disconnected:${kind}`]);
    expect((await h.records().read<AuthenticationCreds>('creds'))?.me?.id).toBe(ME);
  });

  it('logged out by the phone (401): the credentials and keys are wiped before the actor hears of it', async () => {
    const { events, socket } = await h.online();
    await socket.config.auth.keys.set({ session: { [`${PEER}.0`]: Buffer.from('session-bytes') } });
    expect(await h.records().read('key/session/4915112345678.0')).toEqual(Buffer.from('session-bytes'));

    let credsWhenReported: unknown = 'unchecked';
    events.disconnected = (kind, detail) => {
      events.disconnects.push({ kind, detail });
      void h
        .records()
        .read('creds')
        .then((creds) => (credsWhenReported = creds));
    };
    socket.closeWith(401, 'Connection Failure');
    await eventually(() => events.disconnects.length > 0 && credsWhenReported !== 'unchecked', 'the disconnect');
    expect(events.disconnects).toEqual([{ kind: 'logged_out', detail: expect.stringContaining('401') }]);
    expect(credsWhenReported).toBeUndefined();
    expect(await h.records().read('key/session/4915112345678.0')).toBeUndefined();

    const fresh = recordingEvents();
    await h.engine.connect('dev-1', fresh);
    expect(h.sockets.latest().config.auth.creds.me).toBeUndefined(); // a new QR pairing
  });

  it('reports nothing after close() and keeps the credentials', async () => {
    const { connection, events, socket } = await h.online();
    await connection.close();
    expect(socket.endedWith).toEqual([undefined]);
    expect(events.disconnects).toEqual([]);
    expect((await h.records().read<AuthenticationCreds>('creds'))?.me?.id).toBe(ME);
  });

  it('logout() unlinks the device and wipes the credentials, without reporting a disconnect', async () => {
    const { connection, events, socket } = await h.online();
    await connection.logout();
    expect(socket.loggedOut).toBe(true);
    expect(events.disconnects).toEqual([]);
    expect(await h.records().read('creds')).toBeUndefined();
  });

  it('forget() closes the live socket and wipes the credentials', async () => {
    const { socket } = await h.online();
    await h.engine.forget('dev-1');
    expect(socket.endedWith).toHaveLength(1);
    expect(await h.records().read('creds')).toBeUndefined();
    expect(h.engine.connectionCount).toBe(0);
  });

  it('a second connect of the same device first closes the previous socket', async () => {
    const { socket: first, events } = await h.online();
    await h.engine.connect('dev-1', recordingEvents());
    expect(first.endedWith).toHaveLength(1);
    expect(events.disconnects).toEqual([]);
    expect(h.engine.connectionCount).toBe(1);
  });
});
