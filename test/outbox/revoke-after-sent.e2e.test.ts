/**
 * A client told that a message is `sent` revokes or edits it at once (issue 36). The live stream and the
 * webhooks announce what the log holds, and the API's read models follow the log on their own (on
 * EventStoreDB, or in another process, they can be well behind): the gateway must decide on the log's `sent`,
 * never answer 409 for a `sending` its read models still show. Here the read models learn of every `sent` only
 * once the gateway has decided on it (./support/held-followers.ts), and the client acts the moment the log holds it.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventStore } from '../../src/eventstore/event-store.js';
import { type Gateway, startGateway } from '../../src/gateway.js';
import { outboxStream } from '../../src/messages/message-events.js';
import { apiClient, testConfig } from '../support/gateway.js';
import { HeldFollowersStore, readModelsWaitClock, recordsSent } from './support/held-followers.js';
import { type SandboxDevice, createDevice, goOnline, send } from './support/sandbox-devices.js';

const MESSAGES = 50;

describe('revoking or editing a message the moment the log says it is sent', () => {
  let gateway: Gateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  /**
   * Queues MESSAGES messages (every id is known before it is sent), opens the session and, the moment the log
   * holds a message's `sent`, makes `request` for it; answers those not answered 202, with their problem code.
   */
  const actOnEverySent = async (request: (device: SandboxDevice, waMessageId: string) => RequestInit) => {
    let log!: EventStore;
    let held!: HeldFollowersStore;
    gateway = await startGateway(
      testConfig({ DEFAULT_ENGINE: 'sandbox', OUTBOX_SPACING: '0ms', OUTBOX_RATE_PER_MINUTE: '100000' }),
      {
        logger: pino({ level: 'silent' }),
        validateResponses: true,
        clock: readModelsWaitClock(() => held.releaseAsked()),
        wrapStore: (inner) => {
          log = inner;
          return (held = new HeldFollowersStore(inner));
        },
      },
    );
    const api = apiClient(gateway.url);
    const shop = await createDevice(api, 'shop', '4915100000011');
    const ids = new Set<string>();
    for (let i = 0; i < MESSAGES; i++) ids.add((await send(api, shop, '4915112345678', `m${i}`)).waMessageId);
    held.hold(ids);
    await goOnline(api, shop);

    const answers: Array<Promise<{ waMessageId: string; status: number; code?: string }>> = [];
    const acted = new Set<string>();
    // The log itself, followed without the hold: each `sent` is acted on as it is appended.
    const following = log.subscribe();
    try {
      for await (const batch of following) {
        for (const event of batch) {
          if (event.streamId !== outboxStream(shop.id) || !recordsSent(event)) continue;
          const { waMessageId } = event.data as { waMessageId: string };
          if (!ids.has(waMessageId) || acted.has(waMessageId)) continue;
          acted.add(waMessageId);
          held.asking(waMessageId);
          answers.push(
            fetch(`${gateway.url}/devices/${shop.id}/send/${waMessageId}`, request(shop, waMessageId)).then(
              async (response) => {
                held.release(waMessageId);
                return {
                  waMessageId,
                  status: response.status,
                  code: ((await response.json()) as { code?: string }).code,
                };
              },
            ),
          );
        }
        if (acted.size === ids.size) break;
      }
    } finally {
      await following.close();
    }
    expect(acted.size).toBe(MESSAGES);
    return (await Promise.all(answers)).filter((answer) => answer.status !== 202);
  };

  it(
    `revokes each of ${MESSAGES} messages at once (202 deleting, never 409 message_sending)`,
    { timeout: 60_000 },
    async () => {
      const refused = await actOnEverySent((device) => ({ method: 'DELETE', headers: { 'x-device-key': device.key } }));
      expect(refused).toEqual([]);
      // Each message's revoke was requested once, with its outboxId.
      const requested = (await gateway!.store.readStream(outboxStream('shop')))
        .filter((event) => event.type === 'OutboxRevokeRequested')
        .map((event) => event.data as { waMessageId: string; outboxId?: string });
      expect(new Set(requested.map((r) => r.waMessageId)).size).toBe(MESSAGES);
      expect(requested).toHaveLength(MESSAGES);
      expect(requested.every((r) => typeof r.outboxId === 'string')).toBe(true);
    },
  );

  it(
    `edits each of ${MESSAGES} messages at once (202 editing, never 409 not_editable)`,
    { timeout: 60_000 },
    async () => {
      const refused = await actOnEverySent((device) => ({
        method: 'PATCH',
        headers: { 'x-device-key': device.key, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'edited' }),
      }));
      expect(refused).toEqual([]);
    },
  );
});
