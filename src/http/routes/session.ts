import QRCode from 'qrcode';
import Type from 'typebox';
import { ActorStoppedError, type CommandResult } from '../../actors/device-actor.js';
import { type Supervisor, UnknownDeviceError } from '../../actors/supervisor.js';
import { EngineUnavailableError } from '../../engines/engines.js';
import type { DevicesReadModel } from '../../devices/devices-read-model.js';
import type { ProjectionRunner } from '../../projections/projection-runner.js';
import { Problem, conflict, notFound } from '../problem.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { ClosedSessionSchema, CloseSessionBody, MeSchema, QrSchema, SessionStateOnlySchema, SessionStateSchema } from '../schemas/session.js';

const tag = 'Session';

export interface SessionRouteDeps {
  devices: DevicesReadModel;
  sessions: Supervisor;
  projections: ProjectionRunner;
}

const NOT_FOUND = { description: 'No such device (admin key only).' };
const ENGINE_UNAVAILABLE = { description: 'The device\'s engine is not available in this gateway (`engine_unavailable`).' };

export function sessionRoutes({ devices, sessions, projections }: SessionRouteDeps): RouteSpec[] {
  const requireDevice = (deviceId: string) => {
    if (!devices.get(deviceId)) throw notFound(`device "${deviceId}" does not exist`);
  };
  /** Runs a command on the device's actor and answers once the read models include what it recorded. */
  const command = async (deviceId: string, run: () => Promise<CommandResult>): Promise<CommandResult> => {
    requireDevice(deviceId);
    let result: CommandResult;
    try {
      result = await run();
    } catch (error) {
      throw sessionProblem(error);
    }
    if (result.position !== undefined) await projections.waitFor(result.position);
    return result;
  };
  /** What this process knows best: the actor's state when it runs one, else the read model's. */
  const currentState = (deviceId: string) => sessions.state(deviceId) ?? devices.session(deviceId)?.state ?? 'closed';

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
      params: DeviceParams,
      responses: {
        200: { description: 'Already running; nothing changed.', schema: SessionStateOnlySchema },
        202: { description: 'Opening.', schema: SessionStateOnlySchema },
        404: NOT_FOUND,
        409: ENGINE_UNAVAILABLE,
      },
      async handler({ params }) {
        const result = await command(params.deviceId, () => sessions.open(params.deviceId));
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
      params: DeviceParams,
      body: CloseSessionBody,
      responses: { 200: { description: 'The session is closed.', schema: ClosedSessionSchema }, 404: NOT_FOUND, 409: ENGINE_UNAVAILABLE },
      async handler({ params, body }) {
        const result = await command(params.deviceId, () => sessions.close(params.deviceId, { logout: body.logout === true }));
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
      params: DeviceParams,
      responses: { 202: { description: 'Restarting.', schema: SessionStateOnlySchema }, 404: NOT_FOUND, 409: ENGINE_UNAVAILABLE },
      async handler({ params }) {
        const result = await command(params.deviceId, () => sessions.reboot(params.deviceId));
        return { status: 202, body: { state: result.state } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/session/state',
      operationId: 'getSessionState',
      tag,
      summary: 'Read the session state',
      description: '`since` is when the state was entered; `lastError` says why the session last failed and stays until it is online again.',
      access: 'device',
      params: DeviceParams,
      responses: { 200: { description: 'The session state.', schema: SessionStateSchema }, 404: NOT_FOUND },
      handler({ params }) {
        const session = devices.session(params.deviceId);
        if (!session) throw notFound(`device "${params.deviceId}" does not exist`);
        return { status: 200, body: session };
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
        'In any other state `409 qr_unavailable`, with the current state in `detail`.',
      access: 'device',
      params: DeviceParams,
      responses: {
        200: { description: 'The code on show.', schema: QrSchema },
        404: NOT_FOUND,
        409: { description: 'No code on show (`qr_unavailable`); `detail` names the state.' },
      },
      handler({ params }) {
        return { status: 200, body: currentQr(params.deviceId), headers: { 'Cache-Control': 'no-store' } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/session/qr.png',
      operationId: 'getSessionQrPng',
      tag,
      summary: 'The QR code as an image',
      description: 'The code of `GET /session/qr` as a PNG image (not cached). In any state but `qr`: `409 qr_unavailable` (problem+json).',
      access: 'device',
      params: DeviceParams,
      responses: {
        200: { description: 'A PNG image of the code.', schema: Type.String({ format: 'binary' }), contentType: 'image/png' },
        404: NOT_FOUND,
        409: { description: 'No code on show (`qr_unavailable`); `detail` names the state.' },
      },
      async handler({ params }) {
        const { qr } = currentQr(params.deviceId);
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
      description: 'The account the device is linked to, while the session is `online`; otherwise `409 session_not_online` with the current state in `detail`.',
      access: 'device',
      params: DeviceParams,
      responses: {
        200: { description: 'The account.', schema: MeSchema },
        404: NOT_FOUND,
        409: { description: 'The session is not online (`session_not_online`).' },
      },
      handler({ params }) {
        requireDevice(params.deviceId);
        const account = sessions.account(params.deviceId);
        if (!account) throw conflict('session_not_online', `the session is ${currentState(params.deviceId)}, not online`);
        return { status: 200, body: { phone: account.phone, jid: account.jid, ...(account.name ? { name: account.name } : {}) } };
      },
    }),
  ];

  function currentQr(deviceId: string): { qr: string; expiresAt: string } {
    requireDevice(deviceId);
    const qr = sessions.peek(deviceId)?.qr();
    if (!qr) throw conflict('qr_unavailable', `the session is ${currentState(deviceId)}; a QR code is shown only in state qr`);
    return { qr: qr.code, expiresAt: qr.expiresAt };
  }
}

/** Failures of the device actor as problems; anything else goes on to the error middleware. */
export function sessionProblem(error: unknown): unknown {
  if (error instanceof UnknownDeviceError) return notFound(error.message);
  if (error instanceof EngineUnavailableError) return conflict('engine_unavailable', error.message);
  if (error instanceof ActorStoppedError) return new Problem(503, 'shutting_down', 'the gateway is stopping or the device was just deleted; try again');
  return error;
}
