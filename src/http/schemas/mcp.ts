/**
 * POST /mcp's JSON-RPC 2.0 messages, as the Model Context Protocol's Streamable HTTP transport takes them
 * (https://modelcontextprotocol.io/specification/2025-03-26/basic): a request, a notification, a response or
 * an error answer, or a non-empty batch of them. What the SDK does with each is its own; this is the shape.
 */
import Type from 'typebox';
import { MEDIA_KINDS } from '../../media/media-kinds.js';
import { DeviceId } from './common.js';
import { AudioBody, FileBody, ImageOrVideoBody, MediaUrl, StickerBody } from './send.js';

const JsonRpcVersion = Type.Literal('2.0');
const RequestId = Type.Union([Type.String({ maxLength: 200 }), Type.Integer()], {
  description: 'The id the answer carries back.',
});
const Params = Type.Optional(
  Type.Union([Type.Object({}, { additionalProperties: true }), Type.Array(Type.Unknown())], {
    description: 'The method’s arguments.',
  }),
);
const Method = Type.String({ minLength: 1, maxLength: 200, examples: ['tools/list'] });

const JsonRpcRequest = Type.Object(
  { jsonrpc: JsonRpcVersion, id: RequestId, method: Method, params: Params },
  { description: 'A request: answered with the same id.' },
);
const JsonRpcNotification = Type.Object(
  { jsonrpc: JsonRpcVersion, method: Method, params: Params },
  { description: 'A notification (no id): taken, not answered.' },
);
const JsonRpcResult = Type.Object(
  { jsonrpc: JsonRpcVersion, id: RequestId, result: Type.Object({}, { additionalProperties: true }) },
  { description: 'An answer.' },
);
const JsonRpcError = Type.Object(
  {
    jsonrpc: JsonRpcVersion,
    id: Type.Union([RequestId, Type.Null()]),
    error: Type.Object({ code: Type.Integer(), message: Type.String(), data: Type.Optional(Type.Unknown()) }),
  },
  { description: 'An error answer.' },
);

const JsonRpcMessage = Type.Union([JsonRpcRequest, JsonRpcNotification, JsonRpcResult, JsonRpcError]);

export const McpBody = Type.Union([JsonRpcMessage, Type.Array(JsonRpcMessage, { minItems: 1, maxItems: 100 })], {
  description: 'One JSON-RPC 2.0 message or a batch of them.',
});

const JsonRpcAnswer = Type.Union([JsonRpcResult, JsonRpcError]);

export const McpAnswerSchema = Type.Union([JsonRpcAnswer, Type.Array(JsonRpcAnswer)], {
  description: 'The answer to each request (a batch answers a batch).',
});

/**
 * The MCP tool `send_media`: one tool for the media send routes (one route per kind), the route picked by
 * `kind`. By URL only (an agent has no file to upload); the other fields are the routes' own, and a field
 * the chosen kind's route does not take (`ptt` with an image) is refused as that route would refuse it.
 */
const {
  base64: _base64,
  url: _url,
  ...mediaFields
} = {
  ...ImageOrVideoBody.properties,
  ...AudioBody.properties,
  ...FileBody.properties,
  ...StickerBody.properties,
};
export const SendMediaToolInput = Type.Object(
  {
    deviceId: DeviceId,
    kind: Type.Enum(MEDIA_KINDS, { description: 'Which media send route is called: `send/<kind>`.' }),
    ...mediaFields,
    url: MediaUrl,
  },
  { additionalProperties: false },
);
