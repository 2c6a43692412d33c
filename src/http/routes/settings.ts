/**
 * GET / PATCH /settings: a device's call rejection and proxy (src/settings/settings-commands.ts).
 */
import type { SettingsCommands } from '../../settings/settings-commands.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { PatchSettingsBody, SettingsSchema } from '../schemas/settings.js';

const tag = 'Settings';

export function settingsRoutes(settings: SettingsCommands): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/settings',
      operationId: 'getSettings',
      tag,
      summary: "Read the device's settings",
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      responses: {
        200: { description: 'The settings (proxy credentials shown as `***`).', schema: SettingsSchema },
        404: { description: 'No such device.' },
      },
      handler({ params }) {
        return { status: 200, body: settings.view(params.deviceId) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/devices/:deviceId/settings',
      operationId: 'updateSettings',
      tag,
      summary: "Change the device's settings",
      description:
        "`rejectCalls` rejects incoming calls (and sends `rejectCallsMessage` to the caller when set). `proxy` carries this device's WhatsApp connection (from its next " +
        '(re)connect: `POST /session/reboot` applies it now); a proxy that refuses or is down leaves the session `reconnecting` with `lastError` naming it. ' +
        "Recorded in the device's history with the proxy's credentials redacted (encrypted in the log and the read models when ENCRYPTION_KEY is set).",
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      body: PatchSettingsBody,
      responses: {
        200: { description: 'The settings after the change.', schema: SettingsSchema },
        404: { description: 'No such device.' },
      },
      async handler({ params, body }) {
        return { status: 200, body: await settings.change(params.deviceId, body) };
      },
    }),
  ];
}
