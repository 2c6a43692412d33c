/**
 * conversations: 1,000,000 messages over 1,000 chats of 10 devices (two thirds received, a third sent and
 * `sent`), written straight into the store; every read model rebuilt; then a gateway started on that data,
 * and at 50 connections: `GET /chats/:chatId/messages?limit=50` (first pages and pages deep in the chat),
 * `GET /messages/:waMessageId`, `GET /chats` (first pages of the ten devices' lists), and pages deep in a chat of
 * 100,000 messages against the first page of a chat of 10 (key paging: the size of a chat must not matter).
 */
import { generateDeviceKey, hashKey } from '../src/auth/keys.js';
import { deviceStream } from '../src/devices/device-events.js';
import { encodeCursor } from '../src/http/cursor.js';
import { outboxStream } from '../src/messages/message-events.js';
import { inboxStream } from '../src/inbox/inbox-events.js';
import type { Metric } from './lib/benchmark.js';
import { type LogEvent, writeLogDirect } from './lib/event-log.js';
import { type HttpLoadResult, loadHttp } from './lib/http-load.js';
import { ratio, round } from './lib/stats.js';
import { serveDataDir } from './lib/served-data-dir.js';
import { makeTempDir } from './lib/temp.js';
import { rebuildAll } from './rebuild.js';

export const name = 'conversations';
export const description =
  'GET /chats/:chatId/messages, GET /messages/:waMessageId and GET /chats on 1,000,000 messages over 1,000 chats, 50 connections';

const DEVICES = 10;
const CHATS_PER_DEVICE = 100;
/** `BENCH_CONVERSATIONS_MESSAGES` sizes it down for a short check (a multiple of 10, e.g. 100000). */
const MESSAGES = Number(process.env.BENCH_CONVERSATIONS_MESSAGES ?? 1_000_000);
/** Chat 0 gets every tenth message. */
const BIG_CHAT_MESSAGES = MESSAGES / 10;
const SMALL_CHAT_MESSAGES = 10;
/** Every this many messages of a chat, its page key is kept for the deep-page requests. */
const KEY_EVERY = Math.max(1, Math.floor((97 * MESSAGES) / 1_000_000));
const T0 = 1_790_000_000;
const ADMIN_KEY = `ak_bench_${'0'.repeat(32)}`;

interface Chat {
  deviceId: string;
  chatId: string;
  /** (timestamp, log position) keys of some of its messages: cursors into the middle of the chat. */
  keys: Array<{ at: number; pos: number }>;
  count: number;
}

interface History {
  chats: Chat[];
  keys: Map<string, string>;
  /** Some waMessageIds with their device. */
  messageIds: Array<{ deviceId: string; waMessageId: string }>;
  events: number;
}

/** Writes this bench's log into `dataDir` (bench/profile-rebuild.ts profiles its rebuild); answers its events. */
export async function writeConversationLog(dataDir: string): Promise<number> {
  return writeLogDirect(dataDir, conversationEvents({ chats: [], keys: new Map(), messageIds: [], events: 0 }));
}

export async function run(): Promise<Metric[]> {
  const data = makeTempDir('conversations');
  try {
    const started = performance.now();
    const history: History = { chats: [], keys: new Map(), messageIds: [], events: 0 };
    history.events = await writeLogDirect(data.path, conversationEvents(history));
    const writeSeconds = (performance.now() - started) / 1000;
    const rebuild = await rebuildAll(data.path);
    const server = await serveDataDir(data.path, ADMIN_KEY);
    try {
      const headersOf = (deviceId: string) => ({ 'X-Device-Key': history.keys.get(deviceId)! });
      // autocannon sends one set of headers per run: every request of a run goes to one device's chats.
      const device = history.chats[2].deviceId;
      const chats = history.chats.filter(
        (c) => c.deviceId === device && c.count > SMALL_CHAT_MESSAGES && c.count < BIG_CHAT_MESSAGES,
      );
      const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)];
      const pagePath = (chat: Chat, deep: boolean, limit = 50) => {
        const path = `/devices/${chat.deviceId}/chats/${chat.chatId}/messages?limit=${limit}`;
        if (!deep) return path;
        const key = pick(chat.keys);
        return `${path}&cursor=${encodeCursor(`${key.at}:${key.pos}`)}`;
      };
      const load = (deviceId: string, nextPath: () => string, headers: Record<string, string> = headersOf(deviceId)) =>
        loadHttp({
          url: `${server.url}${nextPath()}`,
          headers,
          nextPath,
          connections: 50,
          warmupSeconds: 2,
          durationSeconds: 8,
          serverCpuSeconds: () => server.cpuSeconds(),
        });
      // The baseline of this run: the http bench's route (one device read from its read model), same gateway, same load.
      const baseline = await load(history.chats[0].deviceId, () => `/devices/${history.chats[0].deviceId}`, {
        'X-Admin-Key': ADMIN_KEY,
      });

      let flip = false;
      const pages = await load(device, () => pagePath(pick(chats), (flip = !flip)));
      const ids = history.messageIds.filter((m) => m.deviceId === device);
      const lookups = await load(device, () => `/devices/${device}/messages/${pick(ids).waMessageId}`);
      // First pages of the chat lists of all ten devices (1,000 chats), by the admin key: one set of headers for all.
      const deviceIds = [...history.keys.keys()];
      const chatLists = await load(device, () => `/devices/${pick(deviceIds)}/chats?limit=50`, {
        'X-Admin-Key': ADMIN_KEY,
      });
      // A client polling a page it holds (If-None-Match with the page's ETag): 304s while nothing is written.
      const polled = pagePath(chats[0], false);
      const etag = (await fetch(`${server.url}${polled}`, { headers: headersOf(device) })).headers.get('etag');
      const polls = await load(device, () => polled, { ...headersOf(device), 'If-None-Match': etag ?? '' });
      const big = history.chats.find((c) => c.count === BIG_CHAT_MESSAGES)!;
      const small = history.chats.find((c) => c.count === SMALL_CHAT_MESSAGES)!;
      // Pages of ten on both: the whole small chat against ten messages from anywhere in the big one.
      const bigPages = await load(big.deviceId, () => pagePath(big, true, SMALL_CHAT_MESSAGES));
      const smallPages = await load(small.deviceId, () => pagePath(small, false, SMALL_CHAT_MESSAGES));
      const failures =
        baseline.non2xx +
        baseline.errors +
        pages.non2xx +
        pages.errors +
        lookups.non2xx +
        lookups.errors +
        chatLists.non2xx +
        chatLists.errors +
        // Every poll is a 304 (autocannon counts it as non-2xx): any other answer is a failure.
        (polls.requests - polls.non2xx) +
        polls.errors +
        bigPages.non2xx +
        bigPages.errors +
        smallPages.non2xx +
        smallPages.errors;
      // The gateway's CPU per answer: what a loaded machine changes least (autocannon shares its cores).
      const cpuPerRequest = (metric: string, result: HttpLoadResult): Metric => ({
        metric: `${metric}, gateway CPU per request`,
        value:
          result.serverCpuPercent === undefined
            ? NaN
            : Math.round((result.serverCpuPercent / 100 / result.requestsPerSecond) * 1e6),
        unit: 'µs',
      });
      return [
        cpuPerRequest('baseline GET /devices/:id', baseline),
        cpuPerRequest('GET /chats/:chatId/messages?limit=50', pages),
        cpuPerRequest('GET /messages/:waMessageId', lookups),
        cpuPerRequest('GET /chats?limit=50', chatLists),
        cpuPerRequest('GET /chats/:chatId/messages with If-None-Match (304)', polls),
        { metric: 'messages in the log', value: MESSAGES, unit: 'messages' },
        { metric: 'events in the log', value: history.events, unit: 'events' },
        { metric: 'log written straight into the store', value: round(writeSeconds, 1), unit: 's' },
        {
          metric: 'rebuild of every read model',
          value: Math.round(rebuild.events / rebuild.seconds),
          unit: 'events/s',
        },
        {
          metric: 'baseline GET /devices/:id (same run), req/s',
          value: Math.round(baseline.requestsPerSecond),
          unit: 'req/s',
        },
        { metric: 'baseline GET /devices/:id (same run), p99', value: round(baseline.latency.p99, 2), unit: 'ms' },
        {
          metric: 'GET /chats/:chatId/messages?limit=50 (first and deep pages), req/s',
          value: Math.round(pages.requestsPerSecond),
          unit: 'req/s',
        },
        {
          metric: 'GET /chats/:chatId/messages?limit=50, p99',
          value: round(pages.latency.p99, 2),
          unit: 'ms',
          target: { op: '<=', value: 10 },
        },
        {
          metric: 'GET /chats/:chatId/messages p99 / baseline p99',
          value: round(ratio(pages.latency.p99, baseline.latency.p99), 2),
          unit: '×',
        },
        { metric: 'GET /messages/:waMessageId, req/s', value: Math.round(lookups.requestsPerSecond), unit: 'req/s' },
        {
          metric: 'GET /messages/:waMessageId, p99',
          value: round(lookups.latency.p99, 2),
          unit: 'ms',
          target: { op: '<=', value: 5 },
        },
        {
          metric: 'GET /messages/:waMessageId p99 / baseline p99',
          value: round(ratio(lookups.latency.p99, baseline.latency.p99), 2),
          unit: '×',
        },
        {
          metric: 'GET /chats?limit=50 (first pages), req/s',
          value: Math.round(chatLists.requestsPerSecond),
          unit: 'req/s',
        },
        {
          metric: 'GET /chats?limit=50 (first pages), p99',
          value: round(chatLists.latency.p99, 2),
          unit: 'ms',
          target: { op: '<=', value: 10 },
        },
        {
          metric: 'GET /chats p99 / baseline p99',
          value: round(ratio(chatLists.latency.p99, baseline.latency.p99), 2),
          unit: '×',
        },
        {
          metric: 'GET /chats/:chatId/messages with If-None-Match (304), req/s',
          value: Math.round(polls.requestsPerSecond),
          unit: 'req/s',
        },
        {
          metric: 'GET /chats/:chatId/messages with If-None-Match (304), p99',
          value: round(polls.latency.p99, 2),
          unit: 'ms',
        },
        {
          metric: 'pages of 10 anywhere in a 100,000-message chat, p99',
          value: round(bigPages.latency.p99, 2),
          unit: 'ms',
        },
        {
          metric: 'the one page of 10 of a 10-message chat, p99 (same run)',
          value: round(smallPages.latency.p99, 2),
          unit: 'ms',
        },
        {
          metric: 'p99 ratio 100,000-message chat / 10-message chat',
          value: round(ratio(bigPages.latency.p99, smallPages.latency.p99), 2),
          unit: '×',
          target: { op: '<=', value: 1.5 },
        },
        { metric: 'non-2xx answers and errors', value: failures, unit: 'requests', target: { op: '<=', value: 0 } },
      ];
    } finally {
      await server.stop();
    }
  } finally {
    data.remove();
  }
}

/**
 * The log, in the order a gateway would have appended it: one device's chat 0 gets every tenth message
 * (100,000 in all) and its chat 1 only ten; the other 998 chats share the rest in turn. Positions are
 * counted as the writer will assign them (1, 2, … in this order), so page keys are known here.
 */
function* conversationEvents(history: History): Generator<LogEvent> {
  let position = 0;
  const next = (event: LogEvent): LogEvent => {
    position++;
    return event;
  };
  for (let d = 0; d < DEVICES; d++) {
    const deviceId = `conv-${d}`;
    const key = generateDeviceKey();
    history.keys.set(deviceId, key);
    yield next({
      streamId: deviceStream(deviceId),
      type: 'DeviceCreated',
      data: { deviceId, name: deviceId, engine: 'sandbox', metadata: {}, keyHash: hashKey(key) },
    });
    for (let c = 0; c < CHATS_PER_DEVICE; c++) {
      history.chats.push({
        deviceId,
        chatId: `49301${String(d * CHATS_PER_DEVICE + c).padStart(7, '0')}`,
        keys: [],
        count: 0,
      });
    }
  }
  const [big, small, ...others] = history.chats;
  let turn = 0;
  for (let k = 0; k < MESSAGES; k++) {
    const chat =
      k % 10 === 0 ? big : k % 10 === 5 && small.count < SMALL_CHAT_MESSAGES ? small : others[turn++ % others.length];
    const { deviceId, chatId } = chat;
    const at = T0 + Math.floor(k / 20);
    chat.count++;
    if (chat.count % KEY_EVERY === 0) chat.keys.push({ at, pos: position + 1 });
    if (k % 3 !== 2) {
      const waMessageId = `IN${k.toString(16).toUpperCase().padStart(10, '0')}`;
      if (k % 101 === 0) history.messageIds.push({ deviceId, waMessageId });
      yield next({
        streamId: inboxStream(deviceId),
        type: 'MessageReceived',
        data: {
          deviceId,
          from: chatId,
          chatId,
          isGroup: false,
          type: 'text',
          body: `message ${k} in ${chatId}`,
          timestamp: at,
          waMessageId,
          pushName: `Contact ${chatId.slice(-3)}`,
        },
      });
    } else {
      const waMessageId = `3EB0${k.toString(16).toUpperCase().padStart(18, '0')}`;
      const outboxId = `ob_${k}`;
      if (k % 101 === 2) history.messageIds.push({ deviceId, waMessageId });
      yield next({
        streamId: outboxStream(deviceId),
        type: 'OutboxMessageQueued',
        data: {
          deviceId,
          outboxId,
          waMessageId,
          to: chatId,
          seq: k + 1,
          content: { kind: 'text', text: `reply ${k} to ${chatId}` },
          createdAt: new Date(at * 1000).toISOString(),
        },
      });
      yield next({
        streamId: outboxStream(deviceId),
        type: 'MessageStatusChanged',
        data: { deviceId, waMessageId, status: 'sent', recipient: chatId, outboxId, timestamp: at },
      });
    }
  }
}
