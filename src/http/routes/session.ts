import QRCode from 'qrcode';
import Type from 'typebox';
import type { CommandResult } from '../../sessions/session-commands.js';
import type { Supervisor } from '../../actors/supervisor.js';
import type { DevicesReadModel } from '../../devices/devices-read-model.js';
import { DomainError, deviceNotFound } from '../../errors/domain-error.js';
import type { ReadModelProgress } from '../../projections/projection-runner.js';
import type { StorageHealth } from '../../storage/storage-health.js';
import { type RequestDevice, type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import {
  ClosedSessionSchema,
  CloseSessionBody,
  MeSchema,
  PairBody,
  PairingSchema,
  QrSchema,
  SessionStateOnlySchema,
  SessionStateSchema,
} from '../schemas/session.js';
import { NOT_ONLINE, codeNotShownYet } from './responses.js';

const tag = 'Session';

export interface SessionRouteDeps {
  devices: DevicesReadModel;
  sessions: Supervisor;
  /** Whether writes fail now (src/storage/storage-health.ts): the recorded state may then lag the live one. */
  storage?: Pick<StorageHealth, 'writeFailure'>;
  projections: ReadModelProgress;
  /** The watchdog's judgement of the session (`ok` unless silent). */
  health?: (deviceId: string) => 'ok' | 'silent';
}

const NOT_FOUND = { description: 'No such device (admin key only).' };
const QR_NOT_SHOWN_YET = {
  description:
    'No code at this moment though the state is `qr` (being renewed), or the device moving between processes (`busy`, with `Retry-After`: try again).',
};
const ENGINE_UNAVAILABLE = {
  description: "The device's engine is not available in this gateway (`engine_unavailable`).",
};

export function sessionRoutes({ devices, sessions, projections, storage, health }: SessionRouteDeps): RouteSpec[] {
  /** Runs a command on the device's actor and answers once the read models include what it recorded. */
  const command = async (run: () => Promise<CommandResult>): Promise<CommandResult> => {
    const result = await run();
    if (result.position !== undefined) await projections.settle(result.position);
    return result;
  };

  return [
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/session/open',
      operationId: 'openSession',
      tag,
      summary: 'Open the session',
      description:
        'Starts connecting: with stored credentials the session goes `connecting` → `online`, without it shows a QR code (`qr`). ' +
        'Answers `202` with the new state (`connecting`). A session that is already running (`connecting`, `qr`, `online`, `reconnecting`) ' +
        'is left alone: `200` with its current state. From `logged_out` or `failed` it starts a fresh attempt (`202`).',
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      responses: {
        200: { description: 'Already running; nothing changed.', schema: SessionStateOnlySchema },
        202: { description: 'Opening.', schema: SessionStateOnlySchema },
        404: NOT_FOUND,
        409: ENGINE_UNAVAILABLE,
      },
      async handler({ params }) {
        const result = await command(() => sessions.open(params.deviceId));
        return { status: result.changed ? 202 : 200, body: { state: result.state } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/session/close',
      operationId: 'closeSession',
      tag,
      summary: 'Close the session',
      description:
        'Ends the connection. Without `logout` the credentials are kept and a later open needs no QR code (`closed`); with `logout: true` the device ' +
        'is unlinked from the account and its credentials wiped (`logged_out`). Never a conflict: closing a session that is not running changes ' +
        'nothing (`closed` stays `closed`, `logged_out` stays `logged_out`), except that `failed` becomes `closed` (or `logged_out` with `logout`).',
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      body: CloseSessionBody,
      responses: {
        200: { description: 'The session is closed.', schema: ClosedSessionSchema },
        404: NOT_FOUND,
        409: ENGINE_UNAVAILABLE,
      },
      async handler({ params, body }) {
        const result = await command(() => sessions.close(params.deviceId, { logout: body.logout === true }));
        return { status: 200, body: { state: result.state } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/session/reboot',
      operationId: 'rebootSession',
      tag,
      summary: 'Restart the session',
      description:
        'Closes the connection and opens it again with the stored credentials. Works in every state: a session that is not running is simply opened. ' +
        'Answers `202` with the new state (`connecting`).',
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      responses: {
        202: { description: 'Restarting.', schema: SessionStateOnlySchema },
        404: NOT_FOUND,
        409: ENGINE_UNAVAILABLE,
      },
      async handler({ params }) {
        const result = await command(() => sessions.reboot(params.deviceId));
        return { status: 202, body: { state: result.state } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/session/pair',
      operationId: 'pairSession',
      tag,
      summary: 'Link by a code typed on the phone',
      description:
        'Instead of scanning a QR code: opens the session if needed, waits until it is ready to link, and answers a code to type on the phone of `phone` ' +
        '(WhatsApp → Linked devices → Link with phone number). The state becomes `pairing`; like a QR code, the code is renewed (ask again after `expiresAt`: ' +
        'the answer is the code on show), and the session goes `online` once the code is entered. A session with a linked account: `409 pairing_unavailable`.',
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      body: PairBody,
      responses: {
        202: { description: 'A code to type on the phone.', schema: PairingSchema },
        404: NOT_FOUND,
        409: {
          description:
            'The session has a linked account or is not ready to link, or the engine cannot link by code (`pairing_unavailable`).',
        },
        502: { description: 'The network did not give a code (`engine_error`); try again.' },
      },
      async handler({ params, body }) {
        const result = await sessions.pair(params.deviceId, body.phone);
        if (result.position) await projections.settle(result.position);
        return {
          status: 202,
          body: { state: 'pairing', pairingCode: result.pairing.code, expiresAt: result.pairing.expiresAt },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/session/state',
      operationId: 'getSessionState',
      tag,
      summary: 'Read the session state',
      description:
        '`since` is when the state was entered. `lastError` says why the session failed or, while `reconnecting`, why the last try failed ' +
        '(`dns_failure`, `connect_refused`, `timeout`, `tls`, `proxy`, `client_outdated`, …); `attempt` counts the failed tries and `nextRetryAt` ' +
        'says when the next starts. Every failed try is also a `SessionStateChanged` event in `GET /devices/:id/events` (reason `attempt_failed`). ' +
        '`lastError` is cleared once the session is online, closed, logged out or opened again. ' +
        "`state` is the live session's: a change not recorded yet, as while the gateway cannot write (a full disk: `storageFailing` is `true`), " +
        'shows at once; `since` is then that of the last recorded state, and the diagnostics, which belong to it, are left out. ' +
        "`health` is the session watchdog's judgement: `silent` when the session heard nothing (no message, receipt, presence) for WATCHDOG_SILENCE while it sent.",
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      responses: { 200: { description: 'The session state.', schema: SessionStateSchema }, 404: NOT_FOUND },
      handler({ params, device }) {
        const session = devices.session(params.deviceId);
        if (!session) throw deviceNotFound(params.deviceId); // deleted since the request began
        // The actor (when this process runs the device) knows what the session is now; the read model says the
        // last change recorded, which lags it while changes cannot be recorded (a full disk).
        const flag = {
          ...(storage?.writeFailure === undefined ? {} : { storageFailing: true }),
          health: health?.(params.deviceId) ?? 'ok',
        };
        const live = device.sessionState();
        if (live === session.state) return { status: 200, body: { ...session, ...flag } };
        const { phone, since } = session;
        return { status: 200, body: { state: live, ...(phone === undefined ? {} : { phone }), since, ...flag } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/session/qr',
      operationId: 'getSessionQr',
      tag,
      summary: 'Read the QR code to scan',
      description:
        'While the state is `qr`: the text to encode and when it expires (codes are renewed; ask again after `expiresAt`). ' +
        'In any other state `409 qr_unavailable`, with the current state in `detail`. With several processes, a device on its way to ' +
        'showing its code (moving between processes, or connecting) is waited for a few seconds; no code yet while its state is `qr` ' +
        'or while it moves: `503 busy` with `Retry-After`, try again.',
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      responses: {
        200: { description: 'The code on show.', schema: QrSchema },
        404: NOT_FOUND,
        409: { description: 'No code on show (`qr_unavailable`); `detail` names the state.' },
        503: QR_NOT_SHOWN_YET,
      },
      async handler({ device }) {
        return { status: 200, body: await currentQr(device), headers: { 'Cache-Control': 'no-store' } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/session/qr.png',
      operationId: 'getSessionQrPng',
      tag,
      summary: 'The QR code as an image',
      description:
        'The code of `GET /session/qr` as a PNG image (not cached). In any state but `qr`: `409 qr_unavailable` (problem+json); ' +
        'no code at this moment though the state is `qr`, or the device moving between processes: `503 busy`, as `GET /session/qr` says.',
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      responses: {
        200: {
          description: 'A PNG image of the code.',
          schema: Type.String({ format: 'binary' }),
          contentType: 'image/png',
        },
        404: NOT_FOUND,
        409: { description: 'No code on show (`qr_unavailable`); `detail` names the state.' },
        503: QR_NOT_SHOWN_YET,
      },
      async handler({ device }) {
        const { qr } = await currentQr(device);
        const png = await QRCode.toBuffer(qr, { type: 'png', errorCorrectionLevel: 'M', margin: 2, width: 320 });
        return { status: 200, body: png, headers: { 'Cache-Control': 'no-store' } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/session/me',
      operationId: 'getSessionAccount',
      tag,
      summary: 'The linked account',
      description:
        'The account the device is linked to, once one is (also while the session is closed or reconnecting: then without `name`, which only the ' +
        'live connection knows); with no account linked `409 session_not_online`, with the current state in `detail`.',
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      responses: {
        200: { description: 'The account.', schema: MeSchema },
        404: NOT_FOUND,
        409: NOT_ONLINE,
      },
      handler({ device }) {
        const account = sessions.account(device.id);
        if (account)
          return {
            status: 200,
            body: { phone: account.phone, jid: account.jid, ...(account.name ? { name: account.name } : {}) },
          };
        // Linked, not connected now: the number the session record keeps (cleared when the account unlinks).
        const phone = device.view.session.phone;
        if (phone) return { status: 200, body: { phone, jid: `${phone}@s.whatsapp.net` } };
        throw new DomainError(
          'session_not_online',
          `the session is ${device.sessionState()}, and no account is linked`,
        );
      },
    }),
  ];

  /**
   * Several processes: the process that runs the device has the code (Supervisor.qr asks it). No code though the
   * state says one is on show, or the device between processes: `503 busy`, try again (a `409` saying "the session is
   * qr" would contradict itself, issue 30); otherwise `409` with the state where the device runs (else as recorded).
   */
  async function currentQr(device: RequestDevice): Promise<{ qr: string; expiresAt: string }> {
    const { qr, state = device.sessionState(), moving } = await sessions.qr(device.id);
    if (qr) return { qr: qr.code, expiresAt: qr.expiresAt };
    if (moving || state === 'qr') throw codeNotShownYet(device.id);
    throw new DomainError('qr_unavailable', `the session is ${state}; a QR code is shown only in state qr`);
  }
}
