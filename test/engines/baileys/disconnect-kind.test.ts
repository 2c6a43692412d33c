import { DisconnectReason } from 'baileys';
import { describe, expect, it } from 'vitest';
import { describeDisconnect, disconnectKindOf, statusCodeOf } from '../../../src/engines/baileys/disconnect-kind.js';
import { boom } from './support/fake-socket.js';

describe('Baileys status code → DisconnectKind', () => {
  it.each([
    [DisconnectReason.restartRequired, 'restart_required'],
    [DisconnectReason.loggedOut, 'logged_out'],
    [DisconnectReason.connectionReplaced, 'connection_replaced'],
    [DisconnectReason.connectionLost, 'transient'], // 408: also a dead keepalive and timed-out QR refs
    [DisconnectReason.connectionClosed, 'transient'],
    [DisconnectReason.badSession, 'transient'],
    [DisconnectReason.multideviceMismatch, 'transient'],
    [DisconnectReason.forbidden, 'account_restricted'], // locked or banned
    [402, 'account_restricted'], // temporarily banned
    [406, 'account_restricted'], // banned
    [DisconnectReason.unavailableService, 'transient'],
    [999, 'transient'],
    [undefined, 'transient'],
  ] as const)('%s → %s', (code, kind) => {
    expect(disconnectKindOf(code)).toBe(kind);
  });

  it('reads the status code of a Boom and of nothing else', () => {
    expect(statusCodeOf(boom(515, 'restart'))).toBe(515);
    expect(statusCodeOf(new Error('plain'))).toBeUndefined();
    expect(statusCodeOf(undefined)).toBeUndefined();
    expect(statusCodeOf({ output: { statusCode: '401' } })).toBeUndefined();
  });

  it('describes a close for logs and the actor', () => {
    expect(describeDisconnect(boom(440, 'Stream Errored (conflict)'))).toEqual({
      kind: 'connection_replaced',
      statusCode: 440,
      detail: 'connection_replaced (440): Stream Errored (conflict)',
    });
    expect(describeDisconnect(boom(418, 'odd'))).toMatchObject({ kind: 'transient', detail: 'status_418 (418): odd' });
    expect(describeDisconnect(undefined)).toEqual({ kind: 'transient', detail: 'no_status: connection ended' });
  });
});
