/**
 * The labels of a WhatsApp Business account (docs/api-guide.md): listed as the message index recorded them
 * (src/chats/chat-labels.ts), made, changed, deleted and put on chats through the network first
 * (src/chats/label-commands.ts). Chats carry their label ids (`labels`, `GET /chats?label=`).
 */
import type { LabelCommands } from '../../chats/label-commands.js';
import type { MessageIndex } from '../../chats/message-index.js';
import { DomainError } from '../../errors/domain-error.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { ChatSchema } from '../schemas/chats.js';
import { DeviceParams } from '../schemas/common.js';
import {
  ChatLabelParams,
  LabelCreateBody,
  LabelDeletedSchema,
  LabelListSchema,
  LabelParams,
  LabelPatchBody,
  LabelSchema,
} from '../schemas/labels.js';

const tag = 'Chats';
const NOT_BUSINESS = {
  description:
    'The session is not online (`session_not_online`), or the account is not a WhatsApp Business account (`not_business_account`).',
};
const LABEL_NOT_FOUND = { description: 'No such device, or the account has no such label (`label_not_found`).' };
const RECORDED =
  'Made on WhatsApp first (the other linked devices and the phone see it), then recorded: `label.updated` tells webhooks, as for a change made on the phone.';

export function labelRoutes({
  labels,
  index,
}: {
  /** With several processes, served by the device's owner (src/cluster/owner-calls.ts). */
  labels: Pick<LabelCommands, 'create' | 'update' | 'remove' | 'labelChat'>;
  index: Pick<MessageIndex, 'labels' | 'chat'>;
}): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/labels',
      operationId: 'listLabels',
      tag,
      summary: 'List labels',
      description:
        "The account's labels (WhatsApp Business), made on the phone or through the API; deleted ones are left out. " +
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
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/labels',
      operationId: 'createLabel',
      tag,
      summary: 'Make a label',
      description: `Makes a label (WhatsApp Business); it gets the next free id. ${RECORDED}`,
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      body: LabelCreateBody,
      responses: {
        201: { description: 'The label made.', schema: LabelSchema },
        400: { description: 'A wrong body (`invalid_request`, `malformed_json`).' },
        404: { description: 'No such device.' },
        409: NOT_BUSINESS,
      },
      async handler({ params, body }) {
        return { status: 201, body: await labels.create(params.deviceId, body) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/devices/:deviceId/labels/:labelId',
      operationId: 'updateLabel',
      tag,
      summary: 'Rename or recolour a label',
      description: `Changes the label's name or colour. ${RECORDED}`,
      access: 'device',
      scope: 'manage',
      params: LabelParams,
      body: LabelPatchBody,
      responses: {
        200: { description: 'The label as it is now.', schema: LabelSchema },
        400: { description: 'A wrong body (`invalid_request`, `malformed_json`).' },
        404: LABEL_NOT_FOUND,
        409: NOT_BUSINESS,
      },
      async handler({ params, body }) {
        return { status: 200, body: await labels.update(params.deviceId, params.labelId, body) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/devices/:deviceId/labels/:labelId',
      operationId: 'deleteLabel',
      tag,
      summary: 'Delete a label',
      description:
        'Takes the label off every chat that carries it (each a `chat.labels` `remove`), then deletes it (`label.updated` with `deleted: true`); ' +
        'all on WhatsApp first, as the phone does.',
      access: 'device',
      scope: 'manage',
      params: LabelParams,
      responses: {
        200: { description: 'Deleted.', schema: LabelDeletedSchema },
        404: LABEL_NOT_FOUND,
        409: NOT_BUSINESS,
      },
      async handler({ params }) {
        await labels.remove(params.deviceId, params.labelId);
        return { status: 200, body: { labelId: params.labelId, deleted: true as const } };
      },
    }),
    ...(['put', 'delete'] as const).map((method) =>
      defineRoute({
        method,
        path: '/devices/:deviceId/chats/:chatId/labels/:labelId',
        operationId: method === 'put' ? 'labelChat' : 'unlabelChat',
        tag,
        summary: method === 'put' ? 'Put a label on a chat' : 'Take a label off a chat',
        description:
          `${method === 'put' ? 'Puts the label on the chat' : 'Takes the label off the chat'} on WhatsApp, then records it ` +
          '(`chat.labels`); answers the chat as `GET /chats` shows it, its `labels` included. Doing it twice changes nothing more.',
        access: 'device',
        scope: 'manage',
        params: ChatLabelParams,
        responses: {
          200: { description: 'The chat.', schema: ChatSchema },
          404: {
            description:
              'No such device, or the device has no such chat (`chat_not_found`) or label (`label_not_found`).',
          },
          409: NOT_BUSINESS,
        },
        async handler({ params }) {
          await labels.labelChat(params.deviceId, params.chatId, params.labelId, method === 'put' ? 'add' : 'remove');
          const chat = index.chat(params.deviceId, params.chatId);
          if (!chat) throw new DomainError('chat_not_found', `the device has no chat ${params.chatId}`);
          return { status: 200, body: chat };
        },
      }),
    ),
  ];
}
