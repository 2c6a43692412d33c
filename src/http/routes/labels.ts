/**
 * The labels of a WhatsApp Business account (docs/api-guide.md): those made on the phone or injected in the
 * sandbox, as the message index recorded them (src/chats/chat-labels.ts). Chats carry their label ids (`labels`,
 * `GET /chats?label=`).
 */
import type { MessageIndex } from '../../chats/message-index.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { LabelListSchema } from '../schemas/labels.js';

export function labelRoutes({ index }: { index: Pick<MessageIndex, 'labels'> }): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/labels',
      operationId: 'listLabels',
      tag: 'Chats',
      summary: 'List labels',
      description:
        "The account's labels (WhatsApp Business), as the phone made them; deleted ones are left out. " +
        'A chat lists the ids of its labels (`labels`); `GET /chats?label=<labelId>` filters by one.',
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      responses: {
        200: { description: "The account's labels.", schema: LabelListSchema },
        404: { description: 'No such device.' },
      },
      handler({ params }) {
        return { status: 200, body: { items: index.labels(params.deviceId) } };
      },
    }),
  ];
}
