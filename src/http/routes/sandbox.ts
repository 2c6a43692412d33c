/**
 * What the phone and the network do to a sandbox device (the README's "Sessions and the sandbox engine"), for tests and
 * integrations without a phone. Admin only.
 */
import type { Supervisor } from '../../actors/supervisor.js';
import type { SandboxEngine } from '../../engines/sandbox/sandbox-engine.js';
import type { DevicesReadModel } from '../../devices/devices-read-model.js';
import type { ReadModelProgress } from '../../projections/projection-runner.js';
import { conflict, invalidRequest } from '../problem.js';
import { type RequestDevice, type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { SessionStateOnlySchema } from '../schemas/session.js';
import { InboundAcceptedSchema, InboundBody, ScanBody } from '../schemas/sandbox.js';

const tag = 'Sandbox';

export interface SandboxRouteDeps {
  devices: DevicesReadModel;
  sessions: Supervisor;
  sandbox: SandboxEngine;
  projections: ReadModelProgress;
}

const NOT_FOUND = { description: 'No such device.' };

export function sandboxRoutes({ devices, sessions, sandbox, projections }: SandboxRouteDeps): RouteSpec[] {
  /** 409 `not_sandbox_device` for devices of another engine (the router answered 404 for unknown ones). */
  const requireSandboxDevice = ({ id, view }: RequestDevice) => {
    if (view.engine !== 'sandbox') throw conflict('not_sandbox_device', `device "${id}" uses the ${view.engine} engine, not the sandbox`);
  };
  const notOnline = (device: RequestDevice) => conflict('session_not_online', `the session is ${device.sessionState()}, not online`);
  /** The device has reacted to what the network just did; answer its state, readable everywhere (read your writes). */
  const reaction = async (device: RequestDevice) => {
    const settled = await sessions.settled(device.id);
    if (settled?.position) await projections.settle(settled.position);
    return { status: 202, body: { state: settled?.state ?? device.sessionState() } };
  };

  return [
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/scan',
      operationId: 'sandboxScan',
      tag,
      summary: 'Scan the QR code with a phone',
      description:
        'The phone `phone` scans the code the device shows: the credentials are stored, and the session goes `connecting` (the answer) → `online` with that number. ' +
        'Only while a code is on show (state `qr`); otherwise `409 qr_unavailable` with the current state in `detail`. A number ending in 0000 does not exist: `400`.',
      access: 'admin',
      params: DeviceParams,
      body: ScanBody,
      responses: {
        202: { description: 'Scanned: the device\'s state once it reacted (`connecting`).', schema: SessionStateOnlySchema },
        404: NOT_FOUND,
        409: { description: 'Not a sandbox device (`not_sandbox_device`), or no code on show (`qr_unavailable`).' },
      },
      async handler({ params, body, device }) {
        requireSandboxDevice(device);
        const outcome = await sandbox.scan(params.deviceId, body.phone);
        if (outcome === 'unknown_number') {
          throw invalidRequest('body/phone does not exist in the sandbox', [{ path: '/phone', message: 'numbers ending in 0000 do not exist in the sandbox' }]);
        }
        if (outcome === 'no_qr') throw conflict('qr_unavailable', `the session is ${device.sessionState()}; a code can be scanned only in state qr`);
        return reaction(device);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/inbound',
      operationId: 'sandboxInbound',
      tag,
      summary: 'Receive a message',
      description:
        'A message from `from` reaches the device, which records it as `message.received` before this answers: a 202 is durable. ' +
        'When the store cannot take it, the answer is the store\'s error (`503 store_unavailable`, `507 insufficient_storage`) and the message is not recorded later: send it again. ' +
        'Only while the session is `online`; otherwise `409 session_not_online`. A sender ending in 0000 does not exist: `400`.',
      access: 'admin',
      params: DeviceParams,
      body: InboundBody,
      responses: {
        202: { description: 'Recorded by the device.', schema: InboundAcceptedSchema },
        404: NOT_FOUND,
        409: { description: 'Not a sandbox device (`not_sandbox_device`), or the session is not online (`session_not_online`).' },
        503: { description: 'The store cannot take the message now (`store_unavailable`); it is not recorded.' },
        507: { description: 'The store has no room for the message (`insufficient_storage`); it is not recorded.' },
      },
      async handler({ params, body, device }) {
        requireSandboxDevice(device);
        if (body.from.endsWith('0000')) {
          throw invalidRequest('body/from does not exist in the sandbox', [{ path: '/from', message: 'numbers ending in 0000 do not exist in the sandbox' }]);
        }
        const accepted = await sandbox.inbound(params.deviceId, { from: body.from, type: body.type ?? 'text', body: body.body });
        if (!accepted) throw notOnline(device);
        return { status: 202, body: accepted };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/disconnect',
      operationId: 'sandboxDisconnect',
      tag,
      summary: 'Drop the connection',
      description:
        'The network drops the device\'s connection unexpectedly: the session goes `reconnecting` (the answer), then `online` again after the reconnect delay ' +
        '(SESSION_RECONNECT_BASE_DELAY_MS, with jitter). Only while the session is `online`; otherwise `409 session_not_online`.',
      access: 'admin',
      params: DeviceParams,
      responses: {
        202: { description: 'Dropped: the device\'s state once it reacted (`reconnecting`).', schema: SessionStateOnlySchema },
        404: NOT_FOUND,
        409: { description: 'Not a sandbox device (`not_sandbox_device`), or the session is not online (`session_not_online`).' },
      },
      handler({ params, device }) {
        requireSandboxDevice(device);
        if (!sandbox.disconnect(params.deviceId)) throw notOnline(device);
        return reaction(device);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/logout',
      operationId: 'sandboxLogout',
      tag,
      summary: 'Unlink the device from the phone',
      description:
        'The phone removes the linked device and its credentials stop working. Online: the session goes `logged_out` at once. Linked but not connected: ' +
        'the next open is told and goes `logged_out`. Nothing linked (never scanned, or already unlinked): `409 session_not_linked`.',
      access: 'admin',
      params: DeviceParams,
      responses: {
        202: { description: 'Unlinked: the device\'s state once it reacted (`logged_out` if it was online, else unchanged).', schema: SessionStateOnlySchema },
        404: NOT_FOUND,
        409: { description: 'Not a sandbox device (`not_sandbox_device`), or no account is linked (`session_not_linked`).' },
      },
      async handler({ params, device }) {
        requireSandboxDevice(device);
        if ((await sandbox.logout(params.deviceId)) === 'not_linked') {
          throw conflict('session_not_linked', `no account is linked to device "${params.deviceId}" (the session is ${device.sessionState()})`);
        }
        return reaction(device);
      },
    }),
  ];
}
