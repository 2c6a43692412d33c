import Type from 'typebox';
import { OUTPUT_TYPES } from '../../outputs/output-events.js';
import { OUTPUT_URL_MAX_LENGTH } from '../../outputs/output-url.js';
import { WEBHOOK_EVENT_KINDS } from '../../webhooks/envelope.js';
import { DeviceId, Timestamp } from './common.js';

const OutputId = Type.String({ format: 'uuid', description: 'Output id.' });
export const OutputParams = Type.Object({ outputId: OutputId });

const OutputUrl = Type.String({
  minLength: 1,
  maxLength: OUTPUT_URL_MAX_LENGTH,
  description:
    'The broker: `amqp://` or `amqps://` (RabbitMQ, the path is the vhost) for `amqp`; `nats://` or `tls://` for `nats`. ' +
    'Credentials in it (`user:password@`; a lone user name is a NATS token) are used to connect but shown as `***` in answers, logs and history (encrypted at rest with ENCRYPTION_KEY); ' +
    'the URL sent back exactly as answers show it keeps the stored one.',
});
const Exchange = Type.String({
  pattern: '^(?!amq\\.)[A-Za-z0-9_.:-]{1,255}$',
  description:
    "amqp: the topic exchange published to (declared durable when missing; names starting `amq.` are the broker's).",
});
const RoutingKey = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'amqp: the routing key template; `{deviceId}` and `{event}` are replaced. Default `{deviceId}.{event}`.',
});
const Subject = Type.String({
  minLength: 1,
  maxLength: 200,
  description:
    'nats: the subject template; `{deviceId}` and `{event}` are replaced (no wildcards). Default `dmg.{deviceId}.{event}`.',
});
const Stream = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,64}$',
  description:
    'nats: the JetStream stream that holds the subjects, made when missing (subjects: the template up to its first placeholder, then `>`). Without it, a stream of yours must hold the subjects.',
});
const Events = Type.Array(
  Type.Union([
    Type.Enum(WEBHOOK_EVENT_KINDS, { description: 'Event kind.' }),
    Type.Literal('*', { description: 'Every kind, present and future.' }),
  ]),
  { minItems: 1, uniqueItems: true, description: 'Kinds to publish: non-empty, no duplicates; `"*"`: every kind.' },
);
const Devices = Type.Array(DeviceId, {
  minItems: 1,
  maxItems: 1_000,
  uniqueItems: true,
  description: "Only these devices' events (default: every device).",
});

export const CreateOutputBody = Type.Object(
  {
    type: Type.Enum(OUTPUT_TYPES, { description: '`amqp`: RabbitMQ (AMQP 0-9-1); `nats`: NATS JetStream.' }),
    url: OutputUrl,
    exchange: Type.Optional(Exchange),
    routingKey: Type.Optional(RoutingKey),
    subject: Type.Optional(Subject),
    stream: Type.Optional(Stream),
    events: Events,
    devices: Type.Optional(Devices),
  },
  { additionalProperties: false },
);

export const ChangeOutputBody = Type.Object(
  {
    url: Type.Optional(OutputUrl),
    exchange: Type.Optional(Exchange),
    routingKey: Type.Optional(RoutingKey),
    subject: Type.Optional(Subject),
    stream: Type.Optional(Stream),
    events: Type.Optional(Events),
    devices: Type.Optional(Type.Union([Devices, Type.Null({ description: 'Every device again.' })])),
  },
  { additionalProperties: false },
);

export const OutputSchema = Type.Object({
  outputId: OutputId,
  type: Type.Enum(OUTPUT_TYPES),
  url: Type.String({ description: "The broker's URL, credentials shown as `***`." }),
  exchange: Type.Optional(Type.String()),
  routingKey: Type.Optional(Type.String()),
  subject: Type.Optional(Type.String()),
  stream: Type.Optional(Type.String()),
  events: Type.Array(Type.String()),
  devices: Type.Optional(Type.Array(Type.String())),
  createdAt: Timestamp,
  position: Type.Integer({
    minimum: 0,
    description: 'Every event the output selects up to this log position is confirmed by the broker.',
  }),
  lag: Type.Integer({
    minimum: 0,
    description: "How far the log's head is past `position` (log positions; events on SQLite).",
  }),
  lastError: Type.Union([Type.String(), Type.Null()], {
    description: 'Why publishing fails now (the position holds and it is tried again); null while it works.',
  }),
});

export const OutputListSchema = Type.Object({ items: Type.Array(OutputSchema) });
