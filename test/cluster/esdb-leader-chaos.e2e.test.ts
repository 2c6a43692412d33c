/**
 * `npm run chaos:esdb` (not in `npm test`: about four minutes): two gateway processes on a three-node KurrentDB test cluster whose leader is killed
 * every 5 s for 60 s (DMG_ESDB_CHAOS_MS) while 50 senders send and inbound messages arrive (issue 31). Every 202
 * is sent exactly once, every webhook asked for is delivered, no device is ever held by both processes, and the
 * adapters made a handful of clients (a client made again on every "not leader" made hundreds: reproduction 1).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Cluster, DEVICES, logOf, startEsdbClusterGateways } from './support/esdb-cluster-gateways.js';

const SENDERS = 50;
const CHAOS_MS = Number(process.env.DMG_ESDB_CHAOS_MS ?? 60_000);
const LEADER_KILLED_EVERY_MS = 5_000;
const SEND_EVERY_MS = 250;

describe(
  'two gateway processes on a KurrentDB cluster whose leader keeps dying',
  { timeout: CHAOS_MS + 300_000 },
  () => {
    let cluster: Cluster | undefined;
    afterEach(async () => {
      await cluster?.stop();
      cluster = undefined;
    });

    it('leader killed every 5 s: every 202 sent once, every webhook, one process per device, a handful of clients', async () => {
      cluster = await startEsdbClusterGateways();
      const { server, receiver, nodes, devices, step, watchHolding } = cluster;
      // No device is ever held by both processes: what each says it holds never adds up to more than there are.
      const holding = watchHolding();
      const acknowledged = new Set<string>();
      const injected = new Set<string>();
      const unexpected: string[] = [];
      const until = Date.now() + CHAOS_MS;
      const sender = async (s: number) => {
        for (let n = 0; Date.now() < until; n++) {
          const device = devices[(s + n) % DEVICES];
          const key = `s${s}-${n}`;
          // An answer cut by the election, or "try again" (503), is sent again under the same key, through either.
          for (let attempt = 0; ; attempt++) {
            const answer = await nodes[(s + n + attempt) % 2]
              .api('POST', `/devices/${device.id}/send/text`, {
                deviceKey: device.key,
                json: { to: '4915199999999', text: key },
                headers: { 'idempotency-key': key },
              })
              .catch(() => undefined);
            if (answer?.status === 202) {
              acknowledged.add(answer.body.waMessageId);
              // Paced (up to 200 sends/s in all): the three nodes of the test server share one process (of their
              // own); flat out, they answered heartbeats in seconds, as no cluster does.
              await new Promise((resolve) => setTimeout(resolve, SEND_EVERY_MS));
              break;
            }
            if (answer && answer.status !== 503)
              unexpected.push(`${key}: ${answer.status} ${JSON.stringify(answer.body)}`);
            if (attempt >= 40) throw new Error(`send ${key} not accepted in 40 tries`);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
      };
      const injector = async () => {
        for (let n = 0; Date.now() < until; n++) {
          const device = devices[n % DEVICES];
          const answer = await nodes[n % 2]
            .api('POST', `/sandbox/devices/${device.id}/inbound`, {
              admin: true,
              json: { from: '4915188888888', body: `in-${n}` },
            })
            .catch(() => undefined);
          if (answer?.status === 202) injected.add(answer.body.waMessageId);
          else if (answer && answer.status !== 503) unexpected.push(`inbound ${n}: ${answer.status}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      };
      const killer = async () => {
        while (Date.now() + LEADER_KILLED_EVERY_MS <= until) {
          await new Promise((resolve) => setTimeout(resolve, LEADER_KILLED_EVERY_MS));
          const { from, to } = await server.failover(300);
          step(`leader ${from} killed, ${to} elected`);
        }
      };
      await Promise.all([...Array.from({ length: SENDERS }, (_, s) => sender(s)), injector(), killer()]);
      step(`load done: ${acknowledged.size} sends, ${injected.size} inbound`);

      // Drained at the pace of a loaded machine: the wait ends when every one is sent, and fails only when none has
      // gone for 30 s (a message stuck for good), however many are left.
      const unsent = async () => {
        const { sent } = await logOf(server);
        return [...acknowledged].filter((id) => !sent.has(id));
      };
      for (let left = await unsent(), progressAt = Date.now(); left.length > 0;) {
        if (Date.now() - progressAt > 30_000) {
          for (const record of await server.records())
            if (left.slice(0, 3).some((id) => record.data.includes(id)))
              step(`${record.position} ${record.streamId} ${record.type} ${record.data.slice(0, 300)}`);
          throw new Error(`${left.length} of ${acknowledged.size} acknowledged messages not sent, none for 30 s`);
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
        const now = await unsent();
        if (now.length < left.length) progressAt = Date.now();
        left = now;
      }
      step('every acknowledged message sent');
      const statusOf = (id: string) =>
        receiver.requests.some(
          (request) =>
            request.envelope?.event === 'message.status' &&
            request.envelope.data.waMessageId === id &&
            request.envelope.data.status === 'sent',
        );
      const receivedOf = new Set<string>();
      await receiver.waitUntil(
        () => {
          for (const request of receiver.requests)
            if (request.envelope?.event === 'message.received') receivedOf.add(request.envelope.data.waMessageId);
          return [...acknowledged].every(statusOf) && [...injected].every((id) => receivedOf.has(id));
        },
        120_000,
        'a sent webhook for every 202 and a received webhook for every injection',
      );
      const overlap = await holding.stop();

      expect(unexpected).toEqual([]);
      expect(acknowledged.size).toBeGreaterThan(SENDERS);
      expect(injected.size).toBeGreaterThan(10);
      const { sent } = await logOf(server);
      expect([...acknowledged].filter((id) => sent.get(id) !== 1)).toEqual([]);
      expect([...sent.keys()].filter((id) => !acknowledged.has(id))).toEqual([]);
      expect(overlap).toBe(0);
      // Each gateway's adapter keeps a client or two across all the elections (before: hundreds).
      expect((await server.connectionNames()).length).toBeLessThanOrEqual(8);
    });
  },
);
