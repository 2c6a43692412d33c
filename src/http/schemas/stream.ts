import Type from 'typebox';
import { WEBHOOK_EVENT_KINDS } from '../../webhooks/envelope.js';

export const StreamQuery = Type.Object({
  events: Type.Optional(
    Type.String({
      pattern: `^(${WEBHOOK_EVENT_KINDS.join('|').replaceAll('.', '\\.')})(,(${WEBHOOK_EVENT_KINDS.join('|').replaceAll('.', '\\.')}))*$`,
      maxLength: 256,
      description: `Only these kinds, comma-separated: ${WEBHOOK_EVENT_KINDS.join(', ')}. Default: every kind.`,
    }),
  ),
  after: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description:
        'Resume right after this log position (the `id:` of the last event received). A `Last-Event-ID` header takes precedence.',
    }),
  ),
});

export const STREAM_DESCRIPTION =
  'Server-sent events (`text/event-stream`). Each event has `id:` its position in the log, `event:` its kind, and `data:` the same JSON ' +
  'envelope a webhook gets (`{ id, event, deviceId, timestamp, data }`). Without `Last-Event-ID` or `after` the stream starts with the next ' +
  'new event; with one it first sends, from the log, every event after that position (exactly what the client missed, in order, however ' +
  'long ago, also across restarts of the gateway), then goes on live; a position past the end of the log (one from another log: a restored ' +
  'data directory, another store) is `400`. A comment line (`: keep-alive`) is sent every 15 s ' +
  '(`STREAM_HEARTBEAT`). A client that reads too slowly (more than `STREAM_MAX_BUFFER_BYTES` unsent) is disconnected and resumes by id; ' +
  "`EventSource` does so by itself. Browsers cannot set headers on `EventSource`: use `fetch` with the key header and read the body's stream.";

export const StreamResponse = {
  description: 'An endless `text/event-stream`.',
  schema: Type.String({
    description: 'Server-sent events: `id: <position>`, `event: <kind>`, `data: <envelope JSON>`, blank line.',
  }),
  contentType: 'text/event-stream',
};
