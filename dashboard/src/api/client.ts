/**
 * The gateway's HTTP API as the page uses it: one function per call, typed by the server's schemas (types.ts).
 * The admin key travels only in a header, never in a URL.
 */
import type {
  Accepted,
  ChatFilter,
  ChatList,
  ClosedSession,
  CloseSession,
  CreateDevice,
  CreateKey,
  CreatedKey,
  Delivery,
  DeliveryList,
  DeviceList,
  DeviceMaybeWithKey,
  DeviceWithKey,
  Health,
  HistoryPage,
  Hooks,
  InboundAccepted,
  KeyList,
  LabelList,
  MessagePage,
  Overview,
  OutboxList,
  PacingStatus,
  Pair,
  PatchSettings,
  Pairing,
  Problem,
  PutHooks,
  Qr,
  Queued,
  Removed,
  SandboxCall,
  SandboxCallAnswer,
  SandboxInbound,
  SandboxPair,
  SandboxPresence,
  Scan,
  SendFile,
  SendImage,
  SendText,
  SessionStateOnly,
  Settings,
  TestResult,
  UpdateDevice,
} from './types.js';

/** A problem+json answer (or a network failure, status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** An error in words for a notice: the problem's detail and its code. */
export const describeError = (error: unknown): string =>
  error instanceof ApiError ? `${error.message} (${error.code})` : String(error);

const headersFor = (key: string, json: boolean): Record<string, string> => ({
  'X-Admin-Key': key,
  ...(json ? { 'Content-Type': 'application/json' } : {}),
});

async function problemOf(response: Response): Promise<ApiError> {
  let code = 'error';
  let detail = response.statusText;
  try {
    const body = (await response.json()) as Partial<Problem>;
    code = body.code ?? code;
    detail = body.detail ?? body.title ?? detail;
  } catch {
    // not JSON: keep the status text
  }
  return new ApiError(response.status, code, detail);
}

async function send(key: string, method: string, path: string, body?: unknown): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: headersFor(key, body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new ApiError(0, 'network', `the gateway cannot be reached (${(error as Error).message})`);
  }
  if (!response.ok) throw await problemOf(response);
  return response;
}

/** A call whose answer is JSON of type `T` (the caller names the schema's type). */
const json = async <T>(key: string, method: string, path: string, body?: unknown): Promise<T> =>
  (await (await send(key, method, path, body)).json()) as T;

/** A call answered 204 No Content. */
const empty = async (key: string, method: string, path: string): Promise<void> => {
  await send(key, method, path);
};

const enc = encodeURIComponent;
const device = (id: string) => `/devices/${enc(id)}`;

/** Every call the page makes, with the admin key. */
export function gatewayApi(key: string) {
  return {
    listDevices: (limit: number, cursor?: string | null) =>
      json<DeviceList>(key, 'GET', `/devices?limit=${limit}${cursor ? `&cursor=${enc(cursor)}` : ''}`),
    createDevice: (body: CreateDevice) => json<DeviceWithKey>(key, 'POST', '/devices', body),
    updateDevice: (id: string, body: UpdateDevice) => json<DeviceMaybeWithKey>(key, 'PATCH', device(id), body),
    deleteDevice: (id: string) => empty(key, 'DELETE', device(id)),

    openSession: (id: string) => json<SessionStateOnly>(key, 'POST', `${device(id)}/session/open`),
    closeSession: (id: string, body: CloseSession) =>
      json<ClosedSession>(key, 'POST', `${device(id)}/session/close`, body),
    pair: (id: string, body: Pair) => json<Pairing>(key, 'POST', `${device(id)}/session/pair`, body),
    qr: (id: string) => json<Qr>(key, 'GET', `${device(id)}/session/qr`),
    qrImage: async (id: string): Promise<Blob> => (await send(key, 'GET', `${device(id)}/session/qr.png`)).blob(),

    overview: () => json<Overview>(key, 'GET', '/overview?limit=500'),

    sendText: (id: string, body: SendText) => json<Queued>(key, 'POST', `${device(id)}/send/text`, body),
    sendImage: (id: string, body: SendImage) => json<Queued>(key, 'POST', `${device(id)}/send/image`, body),
    sendFile: (id: string, body: SendFile) => json<Queued>(key, 'POST', `${device(id)}/send/file`, body),
    /** A page of chats, `filter` one of GET /chats's yes/no filters (`unread=true`…) or a label's id, or none. */
    chats: (id: string, limit: number, filter?: ChatFilter | { label: string }, cursor?: string) =>
      json<ChatList>(
        key,
        'GET',
        `${device(id)}/chats?limit=${limit}${
          filter === undefined ? '' : typeof filter === 'string' ? `&${filter}=true` : `&label=${enc(filter.label)}`
        }${cursor ? `&cursor=${enc(cursor)}` : ''}`,
      ),
    labels: (id: string) => json<LabelList>(key, 'GET', `${device(id)}/labels`),
    searchMessages: (id: string, q: string, limit: number, cursor?: string) =>
      json<MessagePage>(
        key,
        'GET',
        `${device(id)}/messages?q=${enc(q)}&limit=${limit}${cursor ? `&cursor=${enc(cursor)}` : ''}`,
      ),
    chatMessages: (id: string, chatId: string, limit: number, cursor?: string) =>
      json<MessagePage>(
        key,
        'GET',
        `${device(id)}/chats/${enc(chatId)}/messages?limit=${limit}${cursor ? `&cursor=${enc(cursor)}` : ''}`,
      ),
    /** A message's media (GET /messages/:id/media), as bytes the page shows through an object URL. */
    media: async (path: string): Promise<Blob> => (await send(key, 'GET', path)).blob(),

    sandboxScan: (id: string, body: Scan) =>
      json<SessionStateOnly>(key, 'POST', `/sandbox/devices/${enc(id)}/scan`, body),
    sandboxPair: (id: string, body: SandboxPair) =>
      json<SessionStateOnly>(key, 'POST', `/sandbox/devices/${enc(id)}/pair`, body),
    sandboxInbound: (id: string, body: SandboxInbound) =>
      json<InboundAccepted>(key, 'POST', `/sandbox/devices/${enc(id)}/inbound`, body),
    sandboxPresence: (id: string, body: SandboxPresence) =>
      json<Accepted>(key, 'POST', `/sandbox/devices/${enc(id)}/presence`, body),
    sandboxCall: (id: string, body: SandboxCall) =>
      json<SandboxCallAnswer>(key, 'POST', `/sandbox/devices/${enc(id)}/call`, body),
    outbox: (id: string, limit: number) => json<OutboxList>(key, 'GET', `${device(id)}/outbox?limit=${limit}`),
    cancelOutbox: (id: string, outboxId: string) =>
      json<Removed>(key, 'DELETE', `${device(id)}/outbox/${enc(outboxId)}`),

    hooks: (id: string) => json<Hooks>(key, 'GET', `${device(id)}/hooks`),
    putHooks: (id: string, body: PutHooks) => json<Hooks>(key, 'PUT', `${device(id)}/hooks`, body),
    deleteHooks: (id: string) => empty(key, 'DELETE', `${device(id)}/hooks`),
    testHooks: (id: string) => json<TestResult>(key, 'POST', `${device(id)}/hooks/test`),
    deliveries: (id: string, limit: number) =>
      json<DeliveryList>(key, 'GET', `${device(id)}/hooks/deliveries?limit=${limit}`),
    retryDelivery: (id: string, deliveryId: string) =>
      json<Delivery>(key, 'POST', `${device(id)}/hooks/deliveries/${enc(deliveryId)}/retry`),

    settings: (id: string) => json<Settings>(key, 'GET', `${device(id)}/settings`),
    patchSettings: (id: string, body: PatchSettings) => json<Settings>(key, 'PATCH', `${device(id)}/settings`, body),
    pacing: (id: string) => json<PacingStatus>(key, 'GET', `${device(id)}/pacing`),

    keys: (id: string) => json<KeyList>(key, 'GET', `${device(id)}/keys`),
    createKey: (id: string, body: CreateKey) => json<CreatedKey>(key, 'POST', `${device(id)}/keys`, body),
    deleteKey: (id: string, keyId: string) => empty(key, 'DELETE', `${device(id)}/keys/${enc(keyId)}`),

    /** The newest `limit` events, read backwards from the end of the log: however long the history, they are its latest. */
    latestHistory: (id: string, limit: number) =>
      json<HistoryPage>(key, 'GET', `${device(id)}/events?direction=backwards&limit=${limit}`),
  };
}

export type GatewayApi = ReturnType<typeof gatewayApi>;

/**
 * GET /health, with the admin key so that it shows the version and uptime (without one it says only whether
 * the gateway is healthy); a 503 carries the same report (a store or disk in trouble).
 */
export async function fetchHealth(adminKey: string): Promise<Health> {
  const response = await fetch('/health', { headers: { 'X-Admin-Key': adminKey } });
  return (await response.json()) as Health;
}
