/**
 * The sandbox phone's labels (WhatsApp Business): made, changed or deleted, and put on chats or taken off, as
 * Baileys reports `labels.edit` and `labels.association`; the device records LabelUpdated and ChatLabelChanged.
 */
import type { SandboxEngine } from '../../engines/sandbox/sandbox-engine.js';
import type { ChatActivity } from '../../engines/engine.js';
import type { OwnerCalls } from '../../cluster/owner-calls.js';
import { sessionNotOnline } from '../../errors/domain-error.js';
import { conflict } from '../problem.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { SandboxLabelsBody } from '../schemas/labels.js';
import { AcceptedSchema } from '../schemas/sandbox.js';

export function sandboxLabelRoutes({
  sandbox,
  calls,
}: {
  sandbox: SandboxEngine;
  /** The device's simulated network is in the process that runs it (src/cluster/owner-calls.ts). */
  calls: OwnerCalls;
}): RouteSpec[] {
  const act = calls.define('sandbox.labels', 'once', async (deviceId: string, activities: ChatActivity[]) => {
    for (const activity of activities) if (!sandbox.activity(deviceId, activity)) return { done: false };
    return { done: true };
  });
  return [
    defineRoute({
      method: 'post',
      path: '/sandbox/devices/:deviceId/labels',
      operationId: 'sandboxLabels',
      tag: 'Sandbox',
      summary: 'The phone changes labels',
      description:
        'The phone of a WhatsApp Business account makes, changes or deletes labels (`labels`), and puts them on chats or takes them off ' +
        '(`chats`): the device records them; `GET /labels` and the chats show them.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      body: SandboxLabelsBody,
      responses: {
        202: { description: 'On its way to the device.', schema: AcceptedSchema },
        404: { description: 'No such device.' },
        409: {
          description:
            'Not a sandbox device (`not_sandbox_device`), or the session is not online (`session_not_online`).',
        },
      },
      async handler({ params, body, device }) {
        if (device.view.engine !== 'sandbox')
          throw conflict(
            'not_sandbox_device',
            `device "${device.id}" uses the ${device.view.engine} engine, not the sandbox`,
          );
        const activities: ChatActivity[] = [
          ...(body.labels ?? []).map((label): ChatActivity => ({
            kind: 'label_updated',
            labelId: label.labelId,
            name: label.name,
            color: label.color ?? 0,
            deleted: label.deleted ?? false,
          })),
          ...(body.chats ?? []).map((change): ChatActivity => ({ kind: 'chat_labels', ...change })),
        ];
        const { done } = await act(params.deviceId, activities);
        if (!done) throw sessionNotOnline(device.sessionState());
        return { status: 202, body: { accepted: true } };
      },
    }),
  ];
}
