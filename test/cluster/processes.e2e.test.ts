/**
 * Four gateway processes on one store (GATEWAY_CLUSTER=true, one port each so that the test can reach a
 * given one), sandbox devices online, sends and webhooks under way; one process is killed with SIGKILL, another
 * paused with SIGSTOP past the lease timeout. Every acknowledged send is sent once, every status webhook
 * arrives, the devices of the dead and the paused process come online elsewhere, and the paused one writes
 * nothing for them once it is resumed. The long version is `npm run chaos:cluster` (bench/cluster-chaos.ts).
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { CHILD_GATEWAY_TESTS, type ChildGateway, spawnGateway } from '../support/child-gateway.js';
import { type Api, apiClient } from '../support/gateway.js';
import { eventually } from '../support/eventually.js';
import { type TestDevice, createSandboxDevice, waitForState } from '../support/sessions.js';
import { tempDir } from '../support/temp-dir.js';
import { TestReceiver } from '../webhooks/support/receiver.js';

const ENV = {
  DEFAULT_ENGINE: 'sandbox',
  GATEWAY_CLUSTER: 'true',
  LEASE_TIMEOUT: '4s',
  OUTBOX_SPACING: '0ms',
  OUTBOX_RATE_PER_MINUTE: '1000000',
  SANDBOX_DELIVERED_DELAY_MS: '50',
  SANDBOX_READ_DELAY_MS: '50',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '250ms,250ms,500ms,1s,1s,1s,1s',
};
/** Four processes (issue 30: the short version of `npm run chaos:cluster` runs at 4), two devices each. */
const PROCESSES = 4;
const DEVICES = 2 * PROCESSES;

interface Node {
  gateway: ChildGateway;
  api: Api;
  pid: number;
}

/** The member (process) that holds each device's lease, as the log says now. */
function owners(dataDir: string): Map<string, number> {
  const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true });
  try {
    const rows = db
      .prepare<[], { stream_id: string; type: string; data: string }>(
        `SELECT e.stream_id, e.type, e.data FROM events e JOIN streams s ON s.stream_id = e.stream_id AND s.revision = e.revision WHERE e.stream_id LIKE 'lease-%'`,
      )
      .all();
    const result = new Map<string, number>();
    for (const row of rows) {
      if (row.type !== 'LeaseAcquired') continue;
      const { deviceId, owner } = JSON.parse(row.data) as { deviceId: string; owner: string };
      result.set(deviceId, Number(owner.split('-').at(-2)));
    }
    return result;
  } finally {
    db.close();
  }
}

/**
 * SIGSTOP, at a moment the process holds no write transaction on the file. One paused inside a write keeps
 * SQLite's write lock for as long as it is stopped: every other process's write then waits (and fails after the
 * busy timeout) and nobody can take its devices until it resumes (docs/architecture.md, "Several processes").
 * That is the file's limit, not the leases': here the pause must land outside a write, so it is tried again.
 */
async function pauseOutsideAWrite(node: Node, dataDir: string): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    node.gateway.process.kill('SIGSTOP');
    await eventually(
      () => readFileSync(`/proc/${node.pid}/stat`, 'utf8').split(') ')[1]?.startsWith('T'),
      'the process stopped',
    );
    if (!writeLocked(dataDir)) return attempt;
    node.gateway.process.kill('SIGCONT');
    await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 100));
  }
  throw new Error('the process held the write lock at every pause');
}

/** Another connection still cannot begin a write after a second: a stopped process holds the lock. */
function writeLocked(dataDir: string): boolean {
  const db = new Database(join(dataDir, 'events.sqlite'), { timeout: 1_000 });
  try {
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
    return false;
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return true;
    throw error;
  } finally {
    db.close();
  }
}

/** The lease events, and the outbox events of acknowledged messages not sent, or sent more than once. */
function messageTrail(dataDir: string, acknowledged: ReadonlySet<string>): string[] {
  const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true });
  try {
    const rows = db
      .prepare<[], { stream_id: string; type: string; data: string; position: number }>(
        `SELECT stream_id, type, data, position FROM events WHERE stream_id LIKE 'outbox-%' OR stream_id LIKE 'lease-%' ORDER BY position`,
      )
      .all();
    const sent = new Map<string, number>();
    for (const row of rows) {
      const data = JSON.parse(row.data) as { status?: string; waMessageId?: string };
      if (row.type === 'MessageStatusChanged' && data.status === 'sent')
        sent.set(data.waMessageId!, (sent.get(data.waMessageId!) ?? 0) + 1);
    }
    const odd = [...acknowledged]
      .filter((id) => sent.get(id) !== 1)
      .concat([...sent.keys()].filter((id) => !acknowledged.has(id)));
    const outboxIds = rows
      .filter((row) => odd.some((id) => row.data.includes(id)))
      .map((row) => (JSON.parse(row.data) as { outboxId?: string }).outboxId)
      .filter((id) => id !== undefined);
    const related = (row: { data: string }) =>
      odd.some((id) => row.data.includes(id)) || outboxIds.some((id) => row.data.includes(id));
    return [
      `not sent exactly once: ${odd.join(' ') || 'none'}`,
      ...rows
        .filter((row) => row.stream_id.startsWith('lease-') || related(row))
        .map((row) => `${row.position} ${row.stream_id} ${row.type} ${row.data.slice(0, 200)}`),
    ];
  } finally {
    db.close();
  }
}

function statusEvents(dataDir: string): Array<{ waMessageId: string; status: string; type: string }> {
  const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true });
  try {
    return db
      .prepare<[], { type: string; data: string }>(
        `SELECT type, data FROM events WHERE stream_id LIKE 'outbox-%' ORDER BY position`,
      )
      .all()
      .map((row) => ({ type: row.type, ...(JSON.parse(row.data) as { waMessageId: string; status: string }) }));
  } finally {
    db.close();
  }
}

describe('several gateway processes on one SQLite file', CHILD_GATEWAY_TESTS, () => {
  const nodes: Node[] = [];
  let receiver: TestReceiver | undefined;
  afterEach(async () => {
    for (const node of nodes.splice(0)) {
      try {
        node.gateway.process.kill('SIGCONT');
      } catch {
        // gone already
      }
      await node.gateway.kill().catch(() => undefined);
    }
    await receiver?.close();
  });

  it('fails over a killed and a paused process: every send once, every webhook, one owner per device', async () => {
    const all: Node[] = [];
    const t0 = Date.now();
    const trace: string[] = [];
    const acknowledged = new Set<string>();
    const step = (what: string) => trace.push(`${((Date.now() - t0) / 1000).toFixed(1)}s ${what}`);
    // On failure: the steps with their times, what the log says of the messages not sent once, and the gateways' output.
    let reported = false;
    const report = () => {
      if (reported) return;
      reported = true;
      let trail: string[];
      try {
        trail = messageTrail(dataDir, acknowledged);
      } catch (error) {
        trail = [String(error)];
      }
      console.error(
        [...trace, ...trail, ...all.map((node) => `--- pid ${node.pid}\n${node.gateway.output()}`)].join('\n'),
      );
    };
    onTestFinished((context) => {
      if (context.task.result?.state === 'fail') report();
    });
    const dataDir = tempDir('dmg-cluster-');
    receiver = await TestReceiver.start();
    try {
      const start = async (worker: number) => {
        // Four load their code at once: on a busy two-core machine that can take longer than one alone.
        const gateway = await spawnGateway(
          dataDir,
          { ...ENV, GATEWAY_WORKER: String(worker) },
          { startTimeoutMs: 90_000 },
        );
        const api = apiClient(gateway.url);
        const node: Node = {
          gateway,
          pid: gateway.process.pid!,
          // A request left unanswered fails the test naming it, instead of waiting for the test's timeout.
          api: (async (method, path, options) => {
            const started = Date.now();
            let timer: NodeJS.Timeout | undefined;
            try {
              return await Promise.race([
                api(method, path, options),
                new Promise<never>(
                  (_, reject) =>
                    (timer = setTimeout(
                      () => reject(new Error(`no answer from pid ${node.pid} to ${method} ${path} in 30s`)),
                      30_000,
                    )),
                ),
              ]);
            } finally {
              clearTimeout(timer);
              if (Date.now() - started > 3_000)
                step(`slow: pid ${node.pid} ${method} ${path} ${Date.now() - started}ms`);
            }
          }) as Api,
        };
        all.push(node);
        return node;
      };
      nodes.push(...(await Promise.all(Array.from({ length: PROCESSES }, (_, i) => start(i + 1)))));
      const [first] = nodes;
      const devices: TestDevice[] = [];
      for (let i = 0; i < DEVICES; i++) {
        const device = await createSandboxDevice(first.api, `c${i}`);
        const hooked = await first.api('PUT', `/devices/${device.id}/hooks`, {
          admin: true,
          json: { url: receiver.url, events: ['message.status'] },
        });
        expect(hooked.status).toBe(200);
        devices.push(device);
      }
      // Opened through any process: the owner runs it (a request to another one is passed on through the store).
      step('devices created');
      // A 503 says "try again, nothing changed" (the shared file's write lock held past the busy timeout, as the
      // processes take their new devices at once): a client opens again, as it sends again.
      await Promise.all(
        devices.map(async (device, i) => {
          for (let attempt = 0; ; attempt++) {
            const r = await nodes[i % PROCESSES].api('POST', `/devices/${device.id}/session/open`, {
              deviceKey: device.key,
            });
            if (r.status === 503 && attempt < 5) {
              step(`open ${device.id}: 503 ${JSON.stringify(r.body)}`);
              continue;
            }
            expect([200, 202]).toContain(r.status);
            return;
          }
        }),
      );
      await eventually(() => owners(dataDir).size === DEVICES, 'every device has an owner');
      const nodeOf = (deviceId: string) => nodes.find((node) => node.pid === owners(dataDir).get(deviceId))!;
      for (const [i, device] of devices.entries()) {
        await waitForState(first.api, device, 'qr');
        // The code on show is the owner's; another process asks it for the code through the store. A device still
        // moving between processes (balanced as they joined) is `503 busy`: a client asks again, as it opens again.
        const elsewhere = nodes.find((node) => node !== nodeOf(device.id))!;
        let qr = await elsewhere.api('GET', `/devices/${device.id}/session/qr`, { deviceKey: device.key });
        for (let attempt = 0; qr.status === 503 && attempt < 5; attempt++) {
          step(`qr ${device.id}: 503 ${JSON.stringify(qr.body)}`);
          qr = await elsewhere.api('GET', `/devices/${device.id}/session/qr`, { deviceKey: device.key });
        }
        expect(qr.status).toBe(200);
        expect(qr.body.qr).toMatch(/^sandbox:/);
        // The sandbox network is in the owner's process: the phone scans there.
        const scanned = await nodeOf(device.id).api('POST', `/sandbox/devices/${device.id}/scan`, {
          admin: true,
          json: { phone: `49151000001${i}` },
        });
        expect(scanned.status).toBe(202);
      }
      step('scanned');
      for (const device of devices) await waitForState(first.api, device, 'online');
      // Balanced: two devices each.
      expect([...new Set(owners(dataDir).values())].length).toBe(PROCESSES);

      const send = async (round: number, through: Node[]) => {
        await Promise.all(
          devices.flatMap((device, d) =>
            Array.from({ length: 5 }, async (_, k) => {
              // A keep-alive socket the server closes as a request leaves is reset: sent again under the same key.
              const key = `r${round}-${device.id}-${k}`;
              for (let attempt = 0; ; attempt++) {
                const node = through[(d + k + attempt) % through.length];
                const answer = await node
                  .api('POST', `/devices/${device.id}/send/text`, {
                    deviceKey: device.key,
                    json: { to: '4915199999999', text: key },
                    headers: { 'idempotency-key': key },
                  })
                  .catch((error: unknown) => {
                    if (attempt >= 5) throw error;
                    return undefined;
                  });
                if (!answer) continue;
                if (answer.status !== 202)
                  step(`send ${key} via pid ${node.pid}: ${answer.status} ${JSON.stringify(answer.body)}`);
                // An answer that says "try again" and changes nothing: the shared file's write lock held past the busy
                // timeout (503). A client sends again under the same key. Never 409: concurrent sends through several
                // processes are decided again until they go through.
                if (answer.status === 503 && attempt < 5) continue;
                expect(answer.status).toBe(202);
                acknowledged.add(answer.body.waMessageId);
                return;
              }
            }),
          ),
        );
      };
      step('online; send 0');
      await send(0, nodes);

      // kill -9 the first process; the others take its devices after the lease timeout.
      const killed = nodes.shift()!;
      const killedDevices = [...owners(dataDir)].filter(([, pid]) => pid === killed.pid).map(([id]) => id);
      expect(killedDevices.length).toBeGreaterThan(0);
      step('kill -9');
      await killed.gateway.kill();
      await send(1, nodes);
      step('send 1 done');
      await eventually(
        () => killedDevices.every((id) => nodes.some((node) => node.pid === owners(dataDir).get(id))),
        "the dead process's devices taken over",
        20_000,
      );

      // SIGSTOP the second one past the lease timeout, send meanwhile, then SIGCONT.
      const paused = nodes.shift()!;
      const pausedDevices = [...owners(dataDir)].filter(([, pid]) => pid === paused.pid).map(([id]) => id);
      step('SIGSTOP');
      step(`paused after ${await pauseOutsideAWrite(paused, dataDir)} retries`);
      await send(2, nodes);
      step('send 2 done');
      await eventually(
        () => pausedDevices.every((id) => nodes.some((node) => node.pid === owners(dataDir).get(id))),
        "the paused process's devices taken over",
        20_000,
      );
      step('SIGCONT');
      paused.gateway.process.kill('SIGCONT');
      nodes.push(paused);

      for (const device of devices) await waitForState(nodes[0].api, device, 'online', 20_000);
      step('all online again');
      await eventually(
        () => {
          const sent = statusEvents(dataDir).filter((e) => e.type === 'MessageStatusChanged' && e.status === 'sent');
          return sent.length >= acknowledged.size;
        },
        'every acknowledged message sent',
        30_000,
      );
      const events = statusEvents(dataDir);
      const sentIds = events
        .filter((e) => e.type === 'MessageStatusChanged' && e.status === 'sent')
        .map((e) => e.waMessageId);
      // Sent once each, under the id it was acknowledged with.
      expect(new Set(sentIds).size).toBe(sentIds.length);
      expect(new Set(sentIds)).toEqual(acknowledged);
      // Every `sent` status reaches the receiver (at least once).
      step('sent checked');
      await receiver.waitUntil(
        () => {
          const delivered = new Set(
            receiver!.requests
              .filter((r) => r.envelope.data?.status === 'sent')
              .map((r) => r.envelope.data.waMessageId),
          );
          return [...acknowledged].every((id) => delivered.has(id));
        },
        30_000,
        'a sent webhook for every message',
      );
      // The resumed process gave up what it held; each device has one owner among the live processes.
      step('webhooks checked');
      await eventually(
        async () => {
          const reports = await Promise.all(
            nodes.map(
              async (node) => (await node.api('GET', '/health', { admin: true })).body.cluster.devicesOwned as number,
            ),
          );
          return reports.reduce((a, b) => a + b, 0) === DEVICES;
        },
        'one owner per device',
        20_000,
      );
    } catch (error) {
      report();
      throw error;
    }
  });
});
