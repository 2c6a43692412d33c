import { outputNotFound } from '../../outputs/output-decider.js';
import type { OutputCommands } from '../../outputs/output-commands.js';
import type { OutputStatus, Outputs } from '../../outputs/outputs.js';
import { type RouteSpec, defineRoute } from '../route.js';
import {
  ChangeOutputBody,
  CreateOutputBody,
  OutputListSchema,
  OutputParams,
  OutputSchema,
} from '../schemas/outputs.js';

export interface OutputRouteDeps {
  commands: OutputCommands;
  outputs: Outputs;
}

const tag = 'Outputs';
const noOutput = { description: 'No such output.' };

/** An output as answers show it: no sealed URL, the URL's credentials as `***`. */
function viewOf({ output, position, lag, lastError }: OutputStatus) {
  const { sealedUrl: _sealed, startAfter: _start, ...shown } = output;
  return { ...shown, position, lag, lastError };
}

export function outputRoutes({ commands, outputs }: OutputRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/outputs',
      operationId: 'createOutput',
      tag,
      summary: 'Publish events to a message broker',
      description:
        "RabbitMQ (`amqp`: a topic exchange, publisher confirms, `messageId` = the event's log position) or NATS JetStream (`nats`: `Nats-Msg-Id` = the log position, so the server drops a repeat). " +
        'Every event the filters select, from now on, is published at least once, in log order (so in order per device); the body is the webhook envelope. ' +
        "A broker that is down or refuses holds the output's position (`lastError` says why) and it catches up when the broker is back. " +
        'The URL is not dialled here: bad credentials show as `lastError`.',
      access: 'admin',
      scope: 'manage',
      body: CreateOutputBody,
      responses: { 201: { description: "Made; it publishes from the log's head.", schema: OutputSchema } },
      async handler({ body }) {
        const recorded = await commands.create(body);
        return { status: 201, body: viewOf(outputs.status(recorded)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/outputs',
      operationId: 'listOutputs',
      tag,
      summary: 'List the broker outputs',
      description: 'Oldest first, each with its position, lag and last error.',
      access: 'admin',
      scope: 'read',
      responses: { 200: { description: 'Every output.', schema: OutputListSchema } },
      handler() {
        return { status: 200, body: { items: outputs.list().map(viewOf) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/outputs/:outputId',
      operationId: 'getOutput',
      tag,
      summary: 'Read a broker output',
      access: 'admin',
      scope: 'read',
      params: OutputParams,
      responses: { 200: { description: 'The output.', schema: OutputSchema }, 404: noOutput },
      handler({ params }) {
        const status = outputs.get(params.outputId);
        if (!status) throw outputNotFound(params.outputId);
        return { status: 200, body: viewOf(status) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/outputs/:outputId',
      operationId: 'changeOutput',
      tag,
      summary: 'Change a broker output',
      description:
        'The fields given change (`devices: null`: every device again); the type does not. It publishes with the new settings from its position: nothing is skipped.',
      access: 'admin',
      scope: 'manage',
      params: OutputParams,
      body: ChangeOutputBody,
      responses: { 200: { description: 'The output.', schema: OutputSchema }, 404: noOutput },
      async handler({ params, body }) {
        const recorded = await commands.change(params.outputId, body);
        return { status: 200, body: viewOf(outputs.status(recorded)) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/outputs/:outputId',
      operationId: 'deleteOutput',
      tag,
      summary: 'Delete a broker output',
      description: 'Nothing more is published. What the broker holds stays.',
      access: 'admin',
      scope: 'manage',
      params: OutputParams,
      responses: { 204: { description: 'Deleted.' }, 404: noOutput },
      async handler({ params }) {
        await commands.delete(params.outputId);
        return { status: 204 };
      },
    }),
  ];
}
