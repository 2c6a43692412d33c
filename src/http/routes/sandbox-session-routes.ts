import { Problem, conflict, invalidRequest } from '../problem.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { SessionStateOnlySchema } from '../schemas/session.js';
import { SandboxPairBody, ScanBody } from '../schemas/sandbox.js';
import { DeafenBody, DeafenSchema } from '../schemas/sandbox.js';
import { codeNotShownYet } from './responses.js';
import { type SandboxCalls, type SandboxRouteDeps, NOT_FOUND, SANDBOX_NOT_ONLINE, tag } from './sandbox-calls.js';

const NOT_SHOWN_YET = {
  description:
    'No code on show at this moment though the state says one is, or the device is moving between processes (`busy`, with `Retry-After`: try again); ' +
    "the event store cannot be reached (`store_unavailable`), or the device's process did not answer in time (`busy`).",
};

export function sandboxSessionRoutes(_deps: SandboxRouteDeps, net: SandboxCalls): RouteSpec[] {
  const { requireSandboxDevice, notOnline, answer, scan, enterCode, deafen, disconnect, unlink } = net;
  return [
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/scan',
      operationId: 'sandboxScan',
      tag,
      summary: 'Scan the QR code with a phone',
      description:
        'The phone `phone` scans the code the device shows: the credentials are stored, and the session goes `connecting` (the answer) → `online` with that number. ' +
        '`business: true`: a WhatsApp Business phone, whose account has labels. ' +
        'Only while a code is on show (state `qr`); otherwise `409 qr_unavailable` with the current state in `detail`. A number ending in 0000 does not exist: `400`. ' +
        'A device on its way to showing its code (connecting, or moving between processes) is waited for a few seconds; no code yet while its state is `qr` ' +
        '(its code being renewed) or while it moves: `503 busy` with `Retry-After`, try again.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      body: ScanBody,
      responses: {
        202: {
          description: "Scanned: the device's state once it reacted (`connecting`).",
          schema: SessionStateOnlySchema,
        },
        404: NOT_FOUND,
        409: { description: 'Not a sandbox device (`not_sandbox_device`), or no code on show (`qr_unavailable`).' },
        503: NOT_SHOWN_YET,
      },
      async handler({ params, body, device }) {
        requireSandboxDevice(device);
        const { outcome, ...reaction } = await scan(params.deviceId, body.phone, body.business === true);
        if (outcome === 'unknown_number') {
          throw invalidRequest('body/phone does not exist in the sandbox', [
            { path: '/phone', message: 'numbers ending in 0000 do not exist in the sandbox' },
          ]);
        }
        if (outcome === 'no_qr') {
          const state = reaction.state ?? device.sessionState();
          if (reaction.moving || state === 'qr') throw codeNotShownYet(params.deviceId);
          throw conflict('qr_unavailable', `the session is ${state}; a code can be scanned only in state qr`);
        }
        return answer(device, reaction);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/pair',
      operationId: 'sandboxPair',
      tag,
      summary: 'Enter the pairing code on the phone',
      description:
        'The phone enters the code the device shows (state `pairing`, after `POST /devices/{id}/session/pair`): the session goes `connecting` (the answer) → `online`, ' +
        'linked to the number the pairing asked for. A wrong code: `422 invalid_pairing_code`; no code on show: `409 pairing_unavailable`. ' +
        'No code yet while the state is `pairing` (another code being entered) or while the device moves between processes: `503 busy` with `Retry-After`, try again.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      body: SandboxPairBody,
      responses: {
        202: {
          description: "Linked: the device's state once it reacted (`connecting`).",
          schema: SessionStateOnlySchema,
        },
        404: NOT_FOUND,
        409: {
          description:
            'Not a sandbox device (`not_sandbox_device`), or no pairing code on show (`pairing_unavailable`).',
        },
        422: { description: 'Not the code on show (`invalid_pairing_code`).' },
        503: NOT_SHOWN_YET,
      },
      async handler({ params, body, device }) {
        requireSandboxDevice(device);
        const { outcome, ...reaction } = await enterCode(params.deviceId, body.code);
        if (outcome === 'no_code') {
          const state = reaction.state ?? device.sessionState();
          if (reaction.moving || state === 'pairing') throw codeNotShownYet(params.deviceId);
          throw conflict(
            'pairing_unavailable',
            `the session is ${state}; a pairing code is entered only in state pairing`,
          );
        }
        if (outcome === 'wrong_code')
          throw new Problem(422, 'invalid_pairing_code', 'this is not the pairing code the device shows');
        return answer(device, reaction);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/deafen',
      operationId: 'sandboxDeafen',
      tag,
      summary: 'Make the device deaf (or hear again)',
      description:
        'With `on: true` the connection stays up (`online`) and nothing reaches the device or leaves it: no messages, receipts, presence; its sends seem to go ' +
        '(`sent`) and are never delivered. What the session watchdog (WATCHDOG_SILENCE) is for. `on: false` ends it. Kept across reconnects and reboots.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      body: DeafenBody,
      responses: {
        200: { description: 'Whether the device is deaf now.', schema: DeafenSchema },
        404: NOT_FOUND,
        409: { description: 'Not a sandbox device (`not_sandbox_device`).' },
      },
      async handler({ params, body, device }) {
        requireSandboxDevice(device);
        return { status: 200, body: await deafen(params.deviceId, body.on) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/disconnect',
      operationId: 'sandboxDisconnect',
      tag,
      summary: 'Drop the connection',
      description:
        "The network drops the device's connection unexpectedly: the session goes `reconnecting` (the answer), then `online` again after the reconnect delay " +
        '(SESSION_RECONNECT_BASE_DELAY_MS, with jitter). Only while the session is `online`; otherwise `409 session_not_online`.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      responses: {
        202: {
          description: "Dropped: the device's state once it reacted (`reconnecting`).",
          schema: SessionStateOnlySchema,
        },
        404: NOT_FOUND,
        409: SANDBOX_NOT_ONLINE,
      },
      async handler({ params, device }) {
        requireSandboxDevice(device);
        const { done, ...reaction } = await disconnect(params.deviceId);
        if (!done) throw notOnline(device, reaction);
        return answer(device, reaction);
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
      scope: 'manage',
      params: DeviceParams,
      responses: {
        202: {
          description: "Unlinked: the device's state once it reacted (`logged_out` if it was online, else unchanged).",
          schema: SessionStateOnlySchema,
        },
        404: NOT_FOUND,
        409: {
          description: 'Not a sandbox device (`not_sandbox_device`), or no account is linked (`session_not_linked`).',
        },
      },
      async handler({ params, device }) {
        requireSandboxDevice(device);
        const { outcome, ...reaction } = await unlink(params.deviceId);
        if (outcome === 'not_linked') {
          throw conflict(
            'session_not_linked',
            `no account is linked to device "${params.deviceId}" (the session is ${reaction.state ?? device.sessionState()})`,
          );
        }
        return answer(device, reaction);
      },
    }),
  ];
}
