/**
 * Two gateway processes on a three-node KurrentDB test cluster whose subscriptions all go silent for 20 s while
 * appends work (issue 31), playing KurrentDB 26.0.3 (fenced writes checked inside the write): no device changes hands and none is held by both (before, liveness was judged only
 * from the subscription: reproduction 2); the sends made meanwhile are answered 202 and sent once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { type Cluster, DEVICES, logOf, startEsdbClusterGateways } from './support/esdb-cluster-gateways.js';

describe('two gateway processes on a KurrentDB cluster whose subscriptions go silent', { timeout: 180_000 }, () => {
  let cluster: Cluster | undefined;
  afterEach(async () => {
    await cluster?.stop();
    cluster = undefined;
  });

  it('subscriptions silenced for 20 s while appends work: no device changes hands, none is held twice', async () => {
    // As KurrentDB 26.0.3: the devices' fenced writes go through AppendRecords with the lease checked in the write
    // (the leader-kill chaos test runs 24.10's read-then-write fence).
    cluster = await startEsdbClusterGateways({ version: '26.0.3' });
    const { server, nodes, devices, step, watchHolding } = cluster;
    const before = new Map((await logOf(server)).owners);
    const acquired = async () => (await server.records()).filter((record) => record.type === 'LeaseAcquired').length;
    const acquiredBefore = await acquired();
    const holding = watchHolding();
    await server.blackHoleSubscriptions(Infinity);
    step('subscriptions silenced');
    // Sends go on meanwhile: appends work and the owners run them. Each answer waits for this process's read models
    // (read-your-writes) until their deadline, then answers without them: 202 all the same, slower.
    const accepted: string[] = [];
    const answers = new Map<number, number>();
    const until = Date.now() + 20_000;
    await Promise.all(
      Array.from({ length: 10 }, async (_, s) => {
        for (let n = 0; Date.now() < until; n++) {
          const device = devices[(s + n) % DEVICES];
          const answer = await nodes[(s + n) % 2].api('POST', `/devices/${device.id}/send/text`, {
            deviceKey: device.key,
            json: { to: '4915199999999', text: `quiet-${s}-${n}` },
          });
          answers.set(answer.status, (answers.get(answer.status) ?? 0) + 1);
          if (answer.status === 202) accepted.push(answer.body.waMessageId);
        }
      }),
    );
    await server.endBlackHole();
    step(`subscriptions back; answers meanwhile: ${JSON.stringify([...answers])}`);
    await eventually(
      async () => {
        const { sent } = await logOf(server);
        return accepted.every((id) => sent.get(id) === 1);
      },
      'the sends made meanwhile sent',
      30_000,
    );
    expect(await holding.stop()).toBe(0);
    expect((await logOf(server)).owners).toEqual(before);
    expect(await acquired()).toBe(acquiredBefore);
    expect([...answers.keys()]).toEqual([202]);
    expect(accepted.length).toBeGreaterThanOrEqual(10);
    // The devices' fenced writes went through AppendRecords, checked in the write.
    expect((await server.calls()).appendRecords).toBeGreaterThan(0);
  });
});
