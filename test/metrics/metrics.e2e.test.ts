import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deterministicEventId } from '../../src/eventstore/event-id.js';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { eventually } from '../support/eventually.js';
import { type Api, startTestGateway } from '../support/gateway.js';

/** Every line is a comment (# HELP / # TYPE) or `name{labels} value`, as the text exposition format says. */
const SAMPLE =
  /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)( -?\d+)?$/;
const COMMENT = /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$/;

function parse(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || COMMENT.test(line)) continue;
    if (!SAMPLE.test(line)) throw new Error(`not Prometheus text: ${line}`);
    const cut = line.lastIndexOf(' ');
    samples.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return samples;
}

describe('metrics', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  beforeAll(async () => {
    gateway = await startTestGateway();
    api = gateway.api;
  });
  afterAll(() => gateway.close());

  const scrape = async () => {
    const answer = await api('GET', '/metrics', { admin: true });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toContain('text/plain');
    return parse(answer.body as string);
  };

  it('shows empty gauges and untouched counters as 0 from the start', async () => {
    const fresh = await scrape();
    for (const sample of [
      'dmg_outbox_depth{status="queued"}',
      'dmg_outbox_depth{status="sending"}',
      'dmg_devices{state="online"}',
      'dmg_devices{state="closed"}',
      'dmg_message_status_total{status="sent"}',
      'dmg_message_status_total{status="expired"}',
      'dmg_chat_pages_total{where="thread"}',
      'dmg_chat_pages_total{where="loop"}',
      'dmg_reader_threads_ready',
    ]) {
      expect(fresh.get(sample), sample).toBe(0);
    }
  });

  it('needs the admin key unless METRICS_PUBLIC is set', async () => {
    expect((await api('GET', '/metrics')).status).toBe(401);
    const open = await startTestGateway({ METRICS_PUBLIC: 'true' });
    expect((await open.api('GET', '/metrics')).status).toBe(200);
    await open.close();
  });

  const value = (name: string, map: Map<string, number>) => map.get(name) ?? 0;

  it('parses as Prometheus text and moves when things happen', async () => {
    const before = await scrape();
    for (const id of ['m-1', 'm-2', 'm-3']) await api('POST', '/devices', { admin: true, json: { id, name: id } });
    await api('GET', '/devices/m-1', { admin: true });
    await gateway.store.append(inboxStream('m-1'), [
      {
        id: deterministicEventId('m-1/in-1'),
        type: 'MessageReceived',
        data: { deviceId: 'm-1', from: '15550001111', type: 'text', body: 'hi', timestamp: 1, waMessageId: 'in-1' },
      },
    ]);
    await gateway.store.append('outbox-m-1', [
      {
        type: 'MessageStatusChanged',
        data: { deviceId: 'm-1', waMessageId: 'w-1', status: 'delivered', recipient: '15550001111', timestamp: 1 },
      },
    ]);
    const sender = await api('POST', '/devices', {
      admin: true,
      json: { id: 'm-sender', name: 's', engine: 'sandbox' },
    });
    const queued = await api('POST', '/devices/m-sender/send/text', {
      deviceKey: sender.body.deviceKey,
      json: { to: '4930123456789', text: 'waits: the session is closed' },
    });
    expect(queued.status).toBe(202);
    await gateway.store.append('webhooks-m-1', [
      {
        type: 'WebhookDeliveryAttempted',
        data: {
          deviceId: 'm-1',
          deliveryId: 'd-1',
          round: 0,
          attempt: 1,
          outcome: 'delivered',
          status: 200,
          durationMs: 12,
          attemptedAt: new Date().toISOString(),
        },
      },
    ]);
    // The event-fed metrics move once the projections have read these events.
    const after = await eventually(async () => {
      const now = await scrape();
      return value('dmg_webhook_deliveries_total{outcome="delivered"}', now) === 1 &&
        value('dmg_outbox_depth{status="queued"}', now) === 1
        ? now
        : undefined;
    }, 'the metrics fed by events');
    expect(value('dmg_outbox_depth{status="queued"}', after)).toBe(1);
    expect(value('dmg_webhook_deliveries_total{outcome="delivered"}', after)).toBe(1);
    expect(value('dmg_webhook_delivery_duration_seconds_count', after)).toBe(1);
    expect(value('dmg_devices{state="closed"}', after) - value('dmg_devices{state="closed"}', before)).toBe(4);
    expect(value('dmg_http_requests_total{route="/devices",method="POST",status="201"}', after)).toBe(4);
    expect(value('dmg_http_requests_total{route="/devices/:deviceId",method="GET",status="200"}', after)).toBe(1);
    expect(value('dmg_eventstore_append_duration_seconds_count', after)).toBeGreaterThanOrEqual(5);
    expect(value('dmg_messages_received_total', after)).toBe(1);
    expect(value('dmg_message_status_total{status="delivered"}', after)).toBe(1);
    expect(value('dmg_process_resident_memory_bytes', after)).toBeGreaterThan(0);
  });

  it('counts chat pages read on a reader thread and on the event loop', async () => {
    // The first page starts the thread and is read on the loop meanwhile; later ones go to the thread.
    const page = () => api('GET', '/devices/m-1/chats/15550001111/messages', { admin: true });
    expect((await page()).status).toBe(200);
    const after = await eventually(async () => {
      expect((await page()).status).toBe(200);
      const now = await scrape();
      return value('dmg_chat_pages_total{where="thread"}', now) >= 1 ? now : undefined;
    }, 'a page read on a reader thread');
    expect(value('dmg_chat_pages_total{where="loop"}', after)).toBeGreaterThanOrEqual(1);
    expect(value('dmg_reader_threads_ready', after)).toBeGreaterThanOrEqual(1);
  });
});
