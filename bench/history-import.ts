/**
 * history-import: the history a phone sends when a device links, 100,000 messages over 1,000 chats, imported by a
 * running gateway until it is queryable. A sandbox device online; the phone sends chunks of 1,000 messages (ten whole
 * conversations of 100 messages each, as WhatsApp chunks whole conversations) one after the other, each answered once
 * recorded (POST /sandbox/devices/:id/history); then the last message is looked for until GET /messages/:waMessageId
 * finds it (the read models caught up). Messages per second from the first chunk to queryable, and the gateway's RSS
 * growth: its peak during the import (sampled every 50 ms) over its RSS before.
 *
 * `BENCH_HISTORY_MESSAGES` sizes it down for a short check (e.g. 5000; chats: one per 100 messages).
 */
import type { Metric } from './lib/benchmark.js';
import { type GatewayChild, processRssBytes, processRssParts, spawnGateway, waitForSessionState } from './lib/child.js';
import { round } from './lib/stats.js';

export const name = 'history-import';
export const description =
  'History sync of 100,000 messages over 1,000 chats through a running gateway to queryable: messages/s and RSS growth';

const MESSAGES = Number(process.env.BENCH_HISTORY_MESSAGES ?? 100_000);
const PER_CHAT = 100;
const CHATS_PER_CHUNK = 10;
const DEVICE = 'history-0';
const PHONE = '4930100000001';
const T0 = 1_700_000_000;
const MB = 1024 * 1024;

export async function run(): Promise<Metric[]> {
  const chats = Math.max(1, Math.ceil(MESSAGES / PER_CHAT));
  const gateway = await spawnGateway({ env: { DEFAULT_ENGINE: 'sandbox' } });
  try {
    await linkDevice(gateway);
    // A warm-up chunk (the import's code paths compiled, its statements prepared), not counted.
    await gateway.adminRequest('POST', `/sandbox/devices/${DEVICE}/history`, chunkBody(-1, 1, false), 202);
    await queryable(gateway, messageId(-1, PER_CHAT - 1));
    const rssBefore = processRssBytes(gateway.pid);
    const partsBefore = processRssParts(gateway.pid);
    let rssPeak = rssBefore ?? 0;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, processRssBytes(gateway.pid) ?? 0)), 50);
    const cpuBefore = gateway.cpuSeconds();
    const started = performance.now();
    let postedSeconds: number;
    try {
      for (let first = 0; first < chats; first += CHATS_PER_CHUNK) {
        const count = Math.min(CHATS_PER_CHUNK, chats - first);
        await gateway.adminRequest(
          'POST',
          `/sandbox/devices/${DEVICE}/history`,
          chunkBody(first, count, first + count >= chats),
          202,
        );
      }
      postedSeconds = (performance.now() - started) / 1000;
      await queryable(gateway, messageId(chats - 1, PER_CHAT - 1));
    } finally {
      clearInterval(sampler);
    }
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = gateway.cpuSeconds();
    const rssAfter = processRssBytes(gateway.pid);
    const partsAfter = processRssParts(gateway.pid);
    const imported = chats * PER_CHAT;
    const metrics: Metric[] = [
      { metric: 'history messages imported', value: imported, unit: 'messages' },
      { metric: 'chats', value: chats, unit: 'chats' },
      {
        metric: 'imported to queryable',
        value: Math.round(imported / seconds),
        unit: 'messages/s',
        target: { op: '>=', value: 20_000 },
      },
      { metric: 'every chunk answered (recorded)', value: round(postedSeconds, 2), unit: 's' },
      { metric: 'then queryable after', value: round(seconds - postedSeconds, 2), unit: 's' },
    ];
    // CPU, not the wall clock, compares runs on a machine shared with other work.
    if (cpuBefore !== undefined && cpuAfter !== undefined)
      metrics.push({ metric: "the gateway's CPU for the import", value: round(cpuAfter - cpuBefore, 2), unit: 's' });
    if (rssBefore !== undefined && rssAfter !== undefined)
      metrics.push(
        { metric: 'RSS before the import', value: round(rssBefore / MB, 1), unit: 'MB' },
        {
          metric: 'RSS growth during the import (peak - before)',
          value: round((rssPeak - rssBefore) / MB, 1),
          unit: 'MB',
          target: { op: '<=', value: 100 },
        },
        { metric: 'RSS growth kept after the import', value: round((rssAfter - rssBefore) / MB, 1), unit: 'MB' },
      );
    if (partsBefore && partsAfter)
      metrics.push(
        {
          metric: 'of the growth kept: anonymous (heap, SQLite page caches)',
          value: round((partsAfter.anon - partsBefore.anon) / MB, 1),
          unit: 'MB',
        },
        {
          metric: "of the growth kept: file-backed (the read models' memory map)",
          value: round((partsAfter.file + partsAfter.shmem - partsBefore.file - partsBefore.shmem) / MB, 1),
          unit: 'MB',
        },
      );
    return metrics;
  } finally {
    await gateway.stop();
  }
}

/** A sandbox device, linked by the sandbox phone scanning its code, online. */
async function linkDevice(gateway: GatewayChild): Promise<void> {
  await gateway.adminRequest('POST', '/devices', { id: DEVICE, name: DEVICE, engine: 'sandbox' }, 201);
  await gateway.adminRequest('POST', `/devices/${DEVICE}/session/open`);
  await waitForSessionState(gateway, DEVICE, 'qr');
  await gateway.adminRequest('POST', `/sandbox/devices/${DEVICE}/scan`, { phone: PHONE });
  await waitForSessionState(gateway, DEVICE, 'online');
}

const chatIdOf = (chat: number) => `49301${String(chat + 1).padStart(7, '0')}`;
const messageId = (chat: number, k: number) => `HIST${String(chat + 1).padStart(6, '0')}${String(k).padStart(4, '0')}`;

/** `count` whole conversations from chat `first` on, their messages oldest first, every third one sent by the account. */
function chunkBody(first: number, count: number, final: boolean) {
  const chats = [];
  for (let chat = first; chat < first + count; chat++) {
    const messages = [];
    for (let k = 0; k < PER_CHAT; k++)
      messages.push({
        waMessageId: messageId(chat, k),
        ...(k % 3 === 2 ? { fromMe: true } : {}),
        body: `history message ${k} of chat ${chat}: order ${chat * PER_CHAT + k} shipped`,
        timestamp: T0 + chat * 60 + k,
      });
    chats.push({ chatId: chatIdOf(chat), name: `Contact ${chat}`, messages });
  }
  return { chats, progress: Math.min(100, Math.round(((first + count) * PER_CHAT * 100) / MESSAGES)), final };
}

/** Resolves once GET /messages/:waMessageId finds the message (polled: the read models catch up on their own). */
async function queryable(gateway: GatewayChild, waMessageId: string, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const answer = await fetch(`${gateway.url}/devices/${DEVICE}/messages/${waMessageId}`, {
      headers: { 'x-admin-key': gateway.adminKey },
    });
    await answer.arrayBuffer();
    if (answer.status === 200) return;
    if (answer.status !== 404) throw new Error(`GET /messages/${waMessageId} answered ${answer.status}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${waMessageId} was not queryable within ${timeoutMs} ms`);
}
