/**
 * The race a client meets (issue 36): its receiver gets a message's `sent` webhook and revokes or edits the
 * message from inside that delivery. The webhooks follow the log on their own, ahead of the API's read models
 * at times (under load, on EventStoreDB); the gateway must decide on what the log holds and never answer 409
 * for the `sending` the client has been told is past. Here every follower of the log but the webhooks' gets
 * each batch that records a `sent` late.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { DelegatingEventStore } from '../../src/eventstore/delegating-store.js';
import type { StoredEvent, SubscribeOptions, Subscription } from '../../src/eventstore/event-store.js';
import { type Gateway, startGateway } from '../../src/gateway.js';
import { apiClient, testConfig } from '../support/gateway.js';
import { TestReceiver } from '../webhooks/support/receiver.js';
import { type SandboxDevice, createDevice, goOnline, send } from './support/sandbox-devices.js';

const MESSAGES = 20;
/** How late the followers other than the webhooks' (the API's read models among them) get a batch with a `sent`. */
const FOLLOWER_LAG_MS = 150;

const recordsSent = (event: StoredEvent) =>
  event.type === 'MessageStatusChanged' && (event.data as { status: string }).status === 'sent';

/** A store whose subscribers, but the webhooks' (told by who subscribes), get each batch with a `sent` late. */
class WebhooksAheadStore extends DelegatingEventStore {
  override subscribe(options?: SubscribeOptions): Subscription {
    const inner = this.inner.subscribe(options);
    if (/src\/webhooks\//.test(new Error().stack ?? '')) return inner;
    return {
      close: () => inner.close(),
      async *[Symbol.asyncIterator]() {
        for await (const batch of inner) {
          if (batch.some(recordsSent)) await new Promise((resolve) => setTimeout(resolve, FOLLOWER_LAG_MS));
          yield batch;
        }
      },
    };
  }
}

type Answer = { waMessageId: string; status: number; code?: string };

describe('revoking or editing a message from inside its `sent` webhook', () => {
  let gateway: Gateway | undefined;
  let receiver: TestReceiver | undefined;
  afterEach(async () => {
    await receiver?.close();
    await gateway?.close();
    gateway = receiver = undefined;
  });

  /**
   * Queues MESSAGES messages, points the device's hook at a receiver that makes `request` for each message as its
   * `sent` webhook arrives (before answering it), opens the session; answers those not answered 202.
   */
  const actOnEverySentWebhook = async (request: (device: SandboxDevice) => RequestInit): Promise<Answer[]> => {
    gateway = await startGateway(
      testConfig({
        DEFAULT_ENGINE: 'sandbox',
        OUTBOX_SPACING: '0ms',
        OUTBOX_RATE_PER_MINUTE: '100000',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      }),
      {
        logger: pino({ level: 'silent' }),
        validateResponses: true,
        wrapStore: (inner) => new WebhooksAheadStore(inner),
      },
    );
    const { url } = gateway;
    const api = apiClient(url);
    const shop = await createDevice(api, 'shop', '4915100000021');
    receiver = await TestReceiver.start();
    const hook = await api('PUT', `/devices/${shop.id}/hooks`, {
      deviceKey: shop.key,
      json: { url: receiver.url, events: ['message.status'] },
    });
    expect(hook.status).toBe(200);

    const ids = new Set<string>();
    for (let i = 0; i < MESSAGES; i++) ids.add((await send(api, shop, '4915112345678', `m${i}`)).waMessageId);
    const answers = new Map<string, Promise<Answer>>();
    receiver.respond = ({ envelope }) => {
      const { waMessageId, status } = envelope.data as { waMessageId: string; status: string };
      if (status !== 'sent' || !ids.has(waMessageId) || answers.has(waMessageId)) return { status: 200 };
      const answer = fetch(`${url}/devices/${shop.id}/send/${waMessageId}`, request(shop)).then(async (response) => ({
        waMessageId,
        status: response.status,
        code: ((await response.json()) as { code?: string }).code,
      }));
      answers.set(waMessageId, answer);
      // The receiver answers once the client has acted, as a handler that revokes before it returns does.
      return { status: 200, after: answer };
    };
    await goOnline(api, shop);
    await receiver.waitUntil(() => answers.size === MESSAGES, 40_000, `the ${MESSAGES} sent webhooks`);
    return (await Promise.all(answers.values())).filter((answer) => answer.status !== 202);
  };

  it(`revokes each of ${MESSAGES} messages (202, never 409 message_sending)`, { timeout: 60_000 }, async () => {
    const refused = await actOnEverySentWebhook((device) => ({
      method: 'DELETE',
      headers: { 'x-device-key': device.key },
    }));
    expect(refused).toEqual([]);
  });

  it(`edits each of ${MESSAGES} messages (202, never 409 not_editable)`, { timeout: 60_000 }, async () => {
    const refused = await actOnEverySentWebhook((device) => ({
      method: 'PATCH',
      headers: { 'x-device-key': device.key, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'edited' }),
    }));
    expect(refused).toEqual([]);
  });
});
