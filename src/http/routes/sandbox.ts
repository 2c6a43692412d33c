/**
 * What the phone and the network do to a sandbox device (API.md, The sandbox engine), for tests and
 * integrations without a phone. Admin only.
 */
import type { Supervisor } from '../../actors/supervisor.js';
import type { SandboxEngine } from '../../engines/sandbox/sandbox-engine.js';
import type { DevicesReadModel } from '../../devices/devices-read-model.js';
import type { ProjectionRunner } from '../../projections/projection-runner.js';
import { conflict, invalidRequest, notFound } from '../problem.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { SessionStateOnlySchema } from '../schemas/session.js';
import { InboundAcceptedSchema, InboundBody, ScanBody } from '../schemas/sandbox.js';

const tag = 'Sandbox';

export interface SandboxRouteDeps {
  devices: DevicesReadModel;
  sessions: Supervisor;
  sandbox: SandboxEngine;
  projections: ProjectionRunner;
}

const NOT_FOUND = { description: 'No such device.' };

export function sandboxRoutes({ devices, sessions, sandbox, projections }: SandboxRouteDeps): RouteSpec[] {
  const stateOf = (deviceId: string) => sessions.state(deviceId) ?? devices.session(deviceId)?.state ?? 'closed';
  /** 404 for unknown devices, 409 `not_sandbox_device` for devices of another engine. */
  const requireSandboxDevice = (deviceId: string) => {
    const device = devices.get(deviceId);
    if (!device) throw notFound(`device "${deviceId}" does not exist`);
    if (device.engine !== 'sandbox') throw conflict('not_sandbox_device', `device "${deviceId}" uses the ${device.engine} engine, not the sandbox`);
  };
  const notOnline = (deviceId: string) => conflict('session_not_online', `the session is ${stateOf(deviceId)}, not online`);
  /** The device has reacted to what the network just did; answer its state, readable everywhere (read your writes). */
  const reaction = async (deviceId: string) => {
    const settled = await sessions.settled(deviceId);
    if (settled?.position) await projections.waitFor(settled.position);
    return { status: 202, body: { state: settled?.state ?? stateOf(deviceId) } };
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
      async handler({ params, body }) {
        requireSandboxDevice(params.deviceId);
        const outcome = await sandbox.scan(params.deviceId, body.phone);
        if (outcome === 'unknown_number') {
          throw invalidRequest('body/phone does not exist in the sandbox', [{ path: '/phone', message: 'numbers ending in 0000 do not exist in the sandbox' }]);
        }
        if (outcome === 'no_qr') throw conflict('qr_unavailable', `the session is ${stateOf(params.deviceId)}; a code can be scanned only in state qr`);
        return reaction(params.deviceId);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/inbound',
      operationId: 'sandboxInbound',
      tag,
      summary: 'Receive a message',
      description:
        'A message from `from` reaches the device, which records it as `message.received` (shortly after this answer). ' +
        'Only while the session is `online`; otherwise `409 session_not_online`. A sender ending in 0000 does not exist: `400`.',
      access: 'admin',
      params: DeviceParams,
      body: InboundBody,
      responses: {
        202: { description: 'On its way to the device.', schema: InboundAcceptedSchema },
        404: NOT_FOUND,
        409: { description: 'Not a sandbox device (`not_sandbox_device`), or the session is not online (`session_not_online`).' },
      },
      handler({ params, body }) {
        requireSandboxDevice(params.deviceId);
        if (body.from.endsWith('0000')) {
          throw invalidRequest('body/from does not exist in the sandbox', [{ path: '/from', message: 'numbers ending in 0000 do not exist in the sandbox' }]);
        }
        const accepted = sandbox.inbound(params.deviceId, { from: body.from, type: body.type ?? 'text', body: body.body });
        if (!accepted) throw notOnline(params.deviceId);
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
      handler({ params }) {
        requireSandboxDevice(params.deviceId);
        if (!sandbox.disconnect(params.deviceId)) throw notOnline(params.deviceId);
        return reaction(params.deviceId);
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
      async handler({ params }) {
        requireSandboxDevice(params.deviceId);
        if ((await sandbox.logout(params.deviceId)) === 'not_linked') {
          throw conflict('session_not_linked', `no account is linked to device "${params.deviceId}" (the session is ${stateOf(params.deviceId)})`);
        }
        return reaction(params.deviceId);
      },
    }),
  ];
}
