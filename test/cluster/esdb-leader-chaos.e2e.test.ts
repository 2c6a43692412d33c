/**
 * `npm test` (in the sqlite project, about 75 s) and `npm run chaos:esdb` alone: two gateway processes on a three-node
 * KurrentDB test cluster whose leader is killed every 5 s for 60 s (DMG_ESDB_CHAOS_MS) while 50 senders send and
 * inbound messages arrive (issue 31). Every 202 is sent exactly once, every webhook asked for is delivered, no device
 * is ever held by both processes, and the adapters made a handful of clients (a client made again on every "not
 * leader" made hundreds: reproduction 1).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { whileProgressing } from '../support/eventually.js';
import { type Cluster, DEVICES, logOf, startEsdbClusterGateways } from './support/esdb-cluster-gateways.js';

const SENDERS = 50;
const CHAOS_MS = Number(process.env.DMG_ESDB_CHAOS_MS ?? 60_000);
const LEADER_KILLED_EVERY_MS = 5_000;
/**
 * Each sender's pause after a 202: 50 senders offer 25 sends/s, about what the two gateways on the one-process test
 * server send through the elections (~26/s measured); at 200/s (250 ms) they took ~60/s and spent 80 s after the
 * chaos draining the backlog, which tested nothing more. DMG_ESDB_CHAOS_SEND_EVERY_MS sets it for a harder run.
 */
const SEND_EVERY_MS = Number(process.env.DMG_ESDB_CHAOS_SEND_EVERY_MS ?? 2_000);

const count = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);

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
      /** The injections' answers by status: in the trace, to tell a slow gateway from one that refuses. */
      const injections = new Map<string, number>();
      /** The sends' answers other than 202 (sent again), by status. */
      const sendRetries = new Map<string, number>();
      const unexpected: string[] = [];
      const until = Date.now() + CHAOS_MS;
      const sender = async (s: number) => {
        for (let n = 0; Date.now() < until; n++) {
          const device = devices[(s + n) % DEVICES];
          const key = `s${s}-${n}`;
          // An answer cut by the election, or "try again" (503, among them busy outbox_contended: the two processes'
          // appends to the device's outbox kept refusing each other through an election for 20 s; 409
          // concurrent_change before), is sent again under the same key, through either, as a client does.
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
              // Paced (SEND_EVERY_MS): the three nodes of the test server share one process (of their own); flat
              // out, they answered heartbeats in seconds, as no cluster does.
              await new Promise((resolve) => setTimeout(resolve, SEND_EVERY_MS));
              break;
            }
            if (answer) count(sendRetries, `${answer.status} ${answer.body?.code ?? ''}`);
            if (answer && answer.status !== 503 && answer.body?.code !== 'concurrent_change')
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
          count(injections, answer ? `${answer.status} ${answer.body?.code ?? ''}` : 'no answer');
          if (answer?.status === 202) injected.add(answer.body.waMessageId);
          // Refused, not lost: 503 while the store cannot take it, 409 session_not_online while the session
          // reconnects after the store could not take its reports (the sender's phone would send it again).
          else if (answer && answer.status !== 503 && answer.body?.code !== 'session_not_online')
            unexpected.push(`inbound ${n}: ${answer.status} ${JSON.stringify(answer.body)}`);
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
      step(
        `load done: ${acknowledged.size} sends (sent again after ${JSON.stringify([...sendRetries])}), ` +
          `${injected.size} inbound (${JSON.stringify([...injections])})`,
      );

      // Drained at the pace of a loaded machine: the wait ends when every one is sent, and fails only when none has
      // gone for 30 s (a message stuck for good), however many are left.
      const unsent = async () => {
        const { sent } = await logOf(server);
        return [...acknowledged].filter((id) => !sent.has(id));
      };
      await whileProgressing(
        unsent,
        (left) => left.length,
        async (left) => {
          for (const record of await server.records())
            if (left.slice(0, 3).some((id) => record.data.includes(id)))
              step(`${record.position} ${record.streamId} ${record.type} ${record.data.slice(0, 300)}`);
          return new Error(`${left.length} of ${acknowledged.size} acknowledged messages not sent, none for 30 s`);
        },
      );
      step('every acknowledged message sent');
      // The webhooks, read incrementally (a check that scanned every request for every message, on every request,
      // starved this process, the receiver's), and waited for while they keep coming: fails once none came for 30 s.
      const sentHooks = new Set<string>();
      const receivedHooks = new Set<string>();
      let read = 0;
      const missing = () => {
        for (const request of receiver.requests.slice(read)) {
          const { event, data } = request.envelope ?? {};
          if (event === 'message.status' && data.status === 'sent') sentHooks.add(data.waMessageId);
          if (event === 'message.received') receivedHooks.add(data.waMessageId);
        }
        read = receiver.requests.length;
        return {
          sent: [...acknowledged].filter((id) => !sentHooks.has(id)),
          received: [...injected].filter((id) => !receivedHooks.has(id)),
        };
      };
      await whileProgressing(
        missing,
        (left) => left.sent.length + left.received.length,
        (left) =>
          new Error(
            `webhooks missing, none for 30 s: ${left.sent.length} sent of ${acknowledged.size} (${left.sent.slice(0, 3).join(', ')}), ` +
              `${left.received.length} received of ${injected.size} (${left.received.slice(0, 3).join(', ')})`,
          ),
      );
      step('every webhook delivered');
      const overlap = await holding.stop();

      expect(unexpected).toEqual([]);
      expect(acknowledged.size).toBeGreaterThan(SENDERS);
      expect(injected.size).toBeGreaterThan(10);
      const { sent } = await logOf(server);
      expect([...acknowledged].filter((id) => sent.get(id) !== 1)).toEqual([]);
      expect([...sent.keys()].filter((id) => !acknowledged.has(id))).toEqual([]);
      expect(overlap).toBe(0);
      // Each gateway's adapter keeps a client or two across all the elections (before: hundreds).
      const clients = (await server.connectionNames()).length;
      step(`${clients} clients made by the two gateways`);
      expect(clients).toBeLessThanOrEqual(8);
      // What a passing run did, for the timings in bench/README.md.
      console.info(cluster.trace().join('\n'));
    });
  },
);
