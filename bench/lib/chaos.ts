/**
 * The chaos run (`npm run chaos`, and a short one in `npm test`): the real gateway in a child process is
 * killed with SIGKILL again and again while clients send messages (with Idempotency-Keys, retried after a
 * cut connection) and inject sandbox inbound messages, and while the webhook receiver goes down and up.
 * Then the gateway is started once more, left to settle, stopped, and the store is checked:
 *
 *  - lost sends: a 202 whose message is not in the store;
 *  - lost inbound: an accepted (202) sandbox inbound message that is not in the store;
 *  - keys sent under two ids: an Idempotency-Key with more than one queued message (or answered with two);
 *  - undelivered webhooks: an event a hook asked for that the receiver never got;
 *  - events with two webhook-ids: one fact (a message received, a status of a message) that reached the
 *    receiver, or the store, under two ids. The same webhook-id twice is fine: at-least-once.
 *
 * Loopback only; bounded by the number of cycles and a settle timeout.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { type Server, createServer } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { waitForHealth } from './child.js';
import { ROOT_DIR } from './paths.js';
import { freePort } from './ports.js';
import { makeTempDir } from './temp.js';

export interface ChaosOptions {
  /** kill -9 cycles. */
  cycles: number;
  /** How long each cycle's gateway runs under load before it is killed, in ms (a random value in between). */
  runMs: [number, number];
  /** Sandbox devices that send and receive. */
  devices: number;
  sendClients: number;
  inboundClients: number;
  /** Pause of each client between two requests, in ms (bounds the load on a shared machine). */
  pauseMs: number;
  /** After the last start, how long the wait for every receipt and webhook goes on with no progress. */
  settleTimeoutMs: number;
  /** Progress lines. */
  log?: (line: string) => void;
}

export const DEFAULT_CHAOS_OPTIONS: ChaosOptions = {
  cycles: 20,
  runMs: [1_500, 3_000],
  devices: 3,
  sendClients: 6,
  inboundClients: 3,
  pauseMs: 20,
  settleTimeoutMs: 30_000,
};

export interface ChaosReport {
  cycles: number;
  durationSeconds: number;
  sends: {
    attempted: number;
    acknowledged: number;
    retriedAfterCut: number;
    statuses: Record<string, number>;
    lost: number;
    keysUnderTwoIds: number;
    notRead: number;
  };
  inbound: {
    attempted: number;
    acknowledged: number;
    statuses: Record<string, number>;
    lost: number;
    lostSamples: string[];
  };
  webhooks: {
    expected: number;
    requests: number;
    redeliveries: number;
    undelivered: number;
    eventsWithTwoIds: number;
    receiverOutages: number;
  };
  integrityCheck: string;
  /** Why the run failed; empty when every check held. */
  failures: string[];
}

/** The longest the last start may take to deliver a backlog that keeps going down. */
const SETTLE_CAP_MS = 10 * 60_000;

const ADMIN_KEY = 'ak_chaos_admin_key_0123456789abcdef';

const GATEWAY_ENV: Record<string, string> = {
  ADMIN_API_KEY: ADMIN_KEY,
  LOG_LEVEL: 'error',
  DEFAULT_ENGINE: 'sandbox',
  OUTBOX_SPACING: '0ms',
  OUTBOX_RATE_PER_MINUTE: '1000000',
  SANDBOX_DELIVERED_DELAY_MS: '100',
  SANDBOX_READ_DELAY_MS: '300',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '200ms,500ms,1s,1s,2s,2s,2s,2s,2s,2s,2s,2s,2s,2s,2s',
  WEBHOOK_RETRY_JITTER: '0',
  WEBHOOK_TIMEOUT_MS: '2000',
  WEBHOOK_HOST_RATE_PER_SECOND: '100000',
};

const random = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));

/** The gateway child: started on the same data again and again, killed with SIGKILL. */
class GatewayProcess {
  private child: ChildProcess | undefined;
  url = '';
  private upWaiters: Array<() => void> = [];
  private isUp = false;
  /** The run is over (or failed): nobody waits for a gateway any more. */
  released = false;

  constructor(private readonly dataDir: string) {}

  async start(): Promise<void> {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT_DIR,
      env: { ...process.env, ...GATEWAY_ENV, DATA_DIR: this.dataDir, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let output = '';
    child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-8_000)));
    let exit: string | undefined;
    child.once('exit', (code, signal) => (exit = signal ?? `code ${code}`));
    this.child = child;
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitForHealth(`${url}/health`, 60_000, () => exit);
    } catch (error) {
      await this.kill();
      throw new Error(`the gateway did not start: ${(error as Error).message}\n${output}`);
    }
    this.url = url;
    this.isUp = true;
    for (const wake of this.upWaiters.splice(0)) wake();
  }

  /** Resolves when a gateway answers (at once when one does). */
  up(): Promise<void> {
    return this.isUp || this.released ? Promise.resolve() : new Promise((resolve) => this.upWaiters.push(resolve));
  }

  markDown(): void {
    this.isUp = false;
  }

  async kill(): Promise<void> {
    this.isUp = false;
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    this.isUp = false;
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
  }

  /** Wakes whoever waits for it when the run ends. */
  release(): void {
    this.released = true;
    for (const wake of this.upWaiters.splice(0)) wake();
  }
}

interface Received {
  webhookId: string;
  envelope: { id: string; event: string; deviceId: string; data: Record<string, unknown> };
}

/** The webhook receiver: one port for the whole run, closed and opened again to make outages. */
class Receiver {
  readonly requests: Received[] = [];
  private server: Server | undefined;
  outages = 0;

  constructor(readonly port: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async up(): Promise<void> {
    if (this.server) return;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        try {
          const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Received['envelope'];
          this.requests.push({ webhookId: String(req.headers['webhook-id'] ?? ''), envelope });
        } catch {
          // not an envelope: counted by nobody, answered anyway
        }
        res.writeHead(200).end();
      });
    });
    server.listen(this.port, '127.0.0.1');
    await once(server, 'listening');
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.outages += 1;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

interface Device {
  id: string;
  key: string;
  phone: string;
}

async function request(
  gateway: GatewayProcess,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
) {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const admin = { 'x-admin-key': ADMIN_KEY };

async function eventually(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function setUp(gateway: GatewayProcess, receiver: Receiver, count: number): Promise<Device[]> {
  const devices: Device[] = [];
  for (let i = 0; i < count; i++) {
    const id = `shop-${i}`;
    const phone = `49151000001${String(i).padStart(2, '0')}`;
    const created = await request(gateway, 'POST', '/devices', admin, { id, name: id, engine: 'sandbox' });
    if (created.status !== 201) throw new Error(`create ${id}: ${created.status}`);
    const device = { id, key: created.body.deviceKey as string, phone };
    const key = { 'x-device-key': device.key };
    const hooks = await request(gateway, 'PUT', `/devices/${id}/hooks`, key, {
      url: receiver.url,
      events: ['message.received', 'message.status', 'session.state'],
    });
    if (hooks.status !== 200) throw new Error(`hooks ${id}: ${hooks.status} ${JSON.stringify(hooks.body)}`);
    await request(gateway, 'POST', `/devices/${id}/session/open`, key);
    await eventually(
      async () => (await request(gateway, 'GET', `/devices/${id}/session/state`, key)).body?.state === 'qr',
      `${id} qr`,
    );
    const scanned = await request(gateway, 'POST', `/sandbox/devices/${id}/scan`, admin, { phone });
    if (scanned.status !== 202) throw new Error(`scan ${id}: ${scanned.status}`);
    await eventually(
      async () => (await request(gateway, 'GET', `/devices/${id}/session/state`, key)).body?.state === 'online',
      `${id} online`,
    );
    devices.push(device);
  }
  return devices;
}

interface Ledger {
  /** Idempotency-Key → the outboxIds it was answered with. */
  sendAnswers: Map<string, Set<string>>;
  sendAttempts: number;
  retriedAfterCut: number;
  sendStatuses: Record<string, number>;
  /** deviceId → waMessageIds accepted. */
  inboundAccepted: Map<string, string[]>;
  inboundAttempts: number;
  inboundStatuses: Record<string, number>;
  /** waMessageId → when it was answered, relative to the run (for the report of a lost one). */
  inboundNotes: Map<string, string>;
  cycle: number;
}

const bump = (counts: Record<string, number>, key: string | number) =>
  (counts[String(key)] = (counts[String(key)] ?? 0) + 1);

function startLoad(
  gateway: GatewayProcess,
  devices: Device[],
  options: ChaosOptions,
  ledger: Ledger,
): { stop(): Promise<void> } {
  let stopping = false;
  let sequence = 0;
  const sender = async (client: number) => {
    let retry: { key: string; device: Device; to: string; text: string; tries: number } | undefined;
    while ((!stopping || retry) && !gateway.released) {
      const n = sequence++;
      // A number that exists in the sandbox (none ends in 0000).
      const job = retry ?? {
        key: `chaos-${client}-${n}`,
        device: devices[n % devices.length],
        to: `4915200${String(n % 1000).padStart(3, '0')}1`,
        text: `text ${n}`,
        tries: 0,
      };
      retry = undefined;
      await gateway.up();
      ledger.sendAttempts += 1;
      try {
        const answer = await request(
          gateway,
          'POST',
          `/devices/${job.device.id}/send/text`,
          { 'x-device-key': job.device.key, 'idempotency-key': job.key },
          { to: job.to, text: job.text },
        );
        bump(ledger.sendStatuses, answer.status);
        if (answer.status === 202) {
          const answers = ledger.sendAnswers.get(job.key) ?? new Set<string>();
          answers.add(answer.body.outboxId as string);
          ledger.sendAnswers.set(job.key, answers);
        } else if (answer.status === 503 && job.tries < 5) retry = { ...job, tries: job.tries + 1 };
      } catch {
        // Cut by the kill: not acknowledged. The client sends it again with the same key.
        bump(ledger.sendStatuses, 'cut');
        gateway.markDown();
        if (job.tries < 5) {
          ledger.retriedAfterCut += 1;
          retry = { ...job, tries: job.tries + 1 };
        }
      }
      if (options.pauseMs > 0) await sleep(options.pauseMs);
    }
  };
  let inboundSequence = 0;
  const injector = async () => {
    while (!stopping && !gateway.released) {
      const device = devices[inboundSequence % devices.length];
      const body = `inbound ${inboundSequence++}`;
      await gateway.up();
      ledger.inboundAttempts += 1;
      const sentAt = performance.now();
      try {
        const answer = await request(gateway, 'POST', `/sandbox/devices/${device.id}/inbound`, admin, {
          from: '4915300000001',
          body,
        });
        bump(ledger.inboundStatuses, answer.status);
        if (answer.status === 202) {
          const accepted = ledger.inboundAccepted.get(device.id) ?? [];
          accepted.push(answer.body.waMessageId as string);
          ledger.inboundNotes.set(
            answer.body.waMessageId as string,
            `cycle ${ledger.cycle}, ${Math.round(performance.now() - sentAt)} ms, at ${Math.round(performance.now())}`,
          );
          ledger.inboundAccepted.set(device.id, accepted);
        }
      } catch {
        bump(ledger.inboundStatuses, 'cut');
        gateway.markDown();
      }
      if (options.pauseMs > 0) await sleep(options.pauseMs);
    }
  };
  const clients = [
    ...Array.from({ length: options.sendClients }, (_, i) => sender(i)),
    ...Array.from({ length: options.inboundClients }, () => injector()),
  ];
  return {
    async stop() {
      stopping = true;
      await Promise.all(clients);
    },
  };
}

function startReceiverFlapping(receiver: Receiver): { stop(): Promise<void> } {
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      await sleep(random(600, 1_800));
      if (stopping) break;
      await receiver.down();
      await sleep(random(300, 1_200));
      await receiver.up();
    }
  })();
  return {
    async stop() {
      stopping = true;
      await loop;
      await receiver.up();
    },
  };
}

interface Row {
  position: number;
  stream_id: string;
  event_id: string;
  type: string;
  data: string;
}

/** What the store holds, read straight from its file. */
function readStore(dataDir: string) {
  const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true });
  try {
    return db
      .prepare<[], Row>(
        "SELECT position, stream_id, event_id, type, data FROM events WHERE stream_id LIKE '%shop-%' ORDER BY position",
      )
      .all()
      .map((row) => ({ ...row, payload: JSON.parse(row.data) as Record<string, any> }));
  } finally {
    db.close();
  }
}

/** The fact a webhook-worthy event records: two events (or ids) for one fact would be one event sent twice under two ids. */
function factOf(type: string, data: Record<string, any>, eventId: string): string {
  if (type === 'MessageReceived' || type === 'message.received') return `${data.deviceId}/in/${data.waMessageId}`;
  if (type === 'MessageStatusChanged' || type === 'message.status')
    return `${data.deviceId}/status/${data.waMessageId}/${data.status}`;
  return `${data.deviceId}/session/${eventId}`;
}

const WEBHOOK_TYPES = new Set(['MessageReceived', 'MessageStatusChanged', 'SessionStateChanged']);

function check(dataDir: string, ledger: Ledger, receiver: Receiver) {
  const events = readStore(dataDir);
  const hookedFrom = new Map<string, number>();
  for (const event of events) {
    if (event.type === 'HooksConfigured' && !hookedFrom.has(event.payload.deviceId))
      hookedFrom.set(event.payload.deviceId, event.position);
  }
  const queued = events.filter((e) => e.type === 'OutboxMessageQueued');
  const queuedByKey = new Map<string, string[]>();
  for (const q of queued) {
    const key = q.payload.idempotency?.key as string | undefined;
    if (key) queuedByKey.set(key, [...(queuedByKey.get(key) ?? []), q.payload.outboxId]);
  }
  const queuedIds = new Set(queued.map((q) => q.payload.outboxId as string));
  const readIds = new Set(
    events
      .filter((e) => e.type === 'MessageStatusChanged' && e.payload.status === 'read')
      .map((e) => e.payload.outboxId as string),
  );
  let lostSends = 0;
  let keysUnderTwoIds = 0;
  let notRead = 0;
  let acknowledged = 0;
  for (const [key, answers] of ledger.sendAnswers) {
    acknowledged += 1;
    if (answers.size > 1) keysUnderTwoIds += 1;
    for (const outboxId of answers) {
      if (!queuedIds.has(outboxId)) lostSends += 1;
      else if (!readIds.has(outboxId)) notRead += 1;
    }
    if ((queuedByKey.get(key)?.length ?? 0) > 1) keysUnderTwoIds += 1;
  }
  for (const [key, ids] of queuedByKey) if (ids.length > 1 && !ledger.sendAnswers.has(key)) keysUnderTwoIds += 1;

  const inboxIds = new Set(
    events.filter((e) => e.type === 'MessageReceived').map((e) => `${e.payload.deviceId}/${e.payload.waMessageId}`),
  );
  let lostInbound = 0;
  let acceptedInbound = 0;
  const lostSamples: string[] = [];
  for (const [deviceId, ids] of ledger.inboundAccepted) {
    for (const id of ids) {
      acceptedInbound += 1;
      if (!inboxIds.has(`${deviceId}/${id}`)) {
        lostInbound += 1;
        if (lostSamples.length < 10) lostSamples.push(`${deviceId}/${id} (${ledger.inboundNotes.get(id) ?? ''})`);
      }
    }
  }

  // Webhooks: every event a hook asked for, by fact; each fact one id, stored and received.
  const storedIdsByFact = new Map<string, Set<string>>();
  for (const event of events) {
    const from = hookedFrom.get(event.payload.deviceId);
    if (!WEBHOOK_TYPES.has(event.type) || from === undefined || event.position <= from) continue;
    const fact = factOf(event.type, event.payload, event.event_id);
    storedIdsByFact.set(fact, (storedIdsByFact.get(fact) ?? new Set()).add(event.event_id));
  }
  const receivedIdsByFact = new Map<string, Set<string>>();
  const seenIds = new Set<string>();
  let redeliveries = 0;
  for (const { webhookId, envelope } of receiver.requests) {
    if (seenIds.has(webhookId)) redeliveries += 1;
    seenIds.add(webhookId);
    const fact = factOf(envelope.event, envelope.data, envelope.id);
    receivedIdsByFact.set(fact, (receivedIdsByFact.get(fact) ?? new Set()).add(webhookId));
  }
  let eventsWithTwoIds = 0;
  let undelivered = 0;
  for (const [fact, ids] of storedIdsByFact) {
    const received = receivedIdsByFact.get(fact);
    if (ids.size > 1 || (received?.size ?? 0) > 1) eventsWithTwoIds += 1;
    else if (!received || ![...ids].every((id) => received.has(id))) undelivered += 1;
  }
  return {
    sends: { acknowledged, lost: lostSends, keysUnderTwoIds, notRead },
    inbound: { acknowledged: acceptedInbound, lost: lostInbound, lostSamples },
    webhooks: {
      expected: storedIdsByFact.size,
      requests: receiver.requests.length,
      redeliveries,
      undelivered,
      eventsWithTwoIds,
    },
  };
}

export async function runChaos(partial: Partial<ChaosOptions> = {}): Promise<ChaosReport> {
  const options = { ...DEFAULT_CHAOS_OPTIONS, ...partial };
  const log = options.log ?? (() => undefined);
  const started = performance.now();
  const data = makeTempDir('chaos');
  const gateway = new GatewayProcess(data.path);
  const receiver = new Receiver(await freePort());
  await receiver.up();
  const ledger: Ledger = {
    sendAnswers: new Map(),
    sendAttempts: 0,
    retriedAfterCut: 0,
    sendStatuses: {},
    inboundAccepted: new Map(),
    inboundAttempts: 0,
    inboundStatuses: {},
    inboundNotes: new Map(),
    cycle: 1,
  };
  let load: { stop(): Promise<void> } | undefined;
  let flapping: { stop(): Promise<void> } | undefined;
  const killOnExit = () => void gateway.kill();
  process.once('exit', killOnExit);
  try {
    await gateway.start();
    const devices = await setUp(gateway, receiver, options.devices);
    log(`set up ${devices.length} devices; ${options.cycles} kill -9 cycles follow`);
    load = startLoad(gateway, devices, options, ledger);
    flapping = startReceiverFlapping(receiver);
    for (let cycle = 1; cycle <= options.cycles; cycle++) {
      const startAt = performance.now();
      if (cycle > 1) await gateway.start();
      const startMs = Math.round(performance.now() - startAt);
      await sleep(random(options.runMs[0], options.runMs[1]));
      log(`cycle ${cycle}: kill at ${Math.round(performance.now())}`);
      await gateway.kill();
      ledger.cycle = cycle + 1;
      const acknowledged = [...ledger.sendAnswers.keys()].length;
      const accepted = [...ledger.inboundAccepted.values()].reduce((n, ids) => n + ids.length, 0);
      log(
        `cycle ${cycle}/${options.cycles}: started in ${startMs} ms, killed; ${acknowledged} sends and ${accepted} inbound acknowledged so far, receiver outages ${receiver.outages}`,
      );
    }
    // The last start: clients finish what was cut (same keys), then everything settles with the receiver up.
    await gateway.start();
    await sleep(1_000);
    await load.stop();
    load = undefined;
    await flapping.stop();
    flapping = undefined;
    log(`last start: settling (receipts, webhooks), ${Math.round((performance.now() - started) / 1000)} s in`);
    let result = check(data.path, ledger, receiver);
    // Settling ends when everything arrived, or when nothing moved for settleTimeoutMs (a stuck lane, a lost
    // event), or after SETTLE_CAP_MS: a long run on a busy machine leaves a backlog that takes a while to
    // deliver, one delivery at a time per device, and a backlog going down is no failure.
    const settleStarted = Date.now();
    let lastProgress = Date.now();
    let remaining = result.sends.notRead + result.webhooks.undelivered;
    while (
      remaining > 0 &&
      Date.now() - lastProgress < options.settleTimeoutMs &&
      Date.now() - settleStarted < SETTLE_CAP_MS
    ) {
      await sleep(500);
      result = check(data.path, ledger, receiver);
      const now = result.sends.notRead + result.webhooks.undelivered;
      if (now < remaining) lastProgress = Date.now();
      remaining = now;
    }
    log(`settled in ${Math.round((Date.now() - settleStarted) / 1000)} s`);
    await gateway.stop();
    result = check(data.path, ledger, receiver);
    const db = new Database(join(data.path, 'events.sqlite'), { readonly: true });
    const integrityCheck = String(db.pragma('integrity_check', { simple: true }));
    db.close();

    const failures: string[] = [];
    if (result.sends.lost > 0) failures.push(`${result.sends.lost} acknowledged send(s) lost`);
    if (result.sends.keysUnderTwoIds > 0)
      failures.push(`${result.sends.keysUnderTwoIds} Idempotency-Key(s) sent under two ids`);
    if (result.sends.notRead > 0) failures.push(`${result.sends.notRead} acknowledged send(s) never reached read`);
    if (result.inbound.lost > 0) failures.push(`${result.inbound.lost} acknowledged inbound message(s) lost`);
    if (result.webhooks.undelivered > 0)
      failures.push(`${result.webhooks.undelivered} webhook event(s) never delivered`);
    if (result.webhooks.eventsWithTwoIds > 0)
      failures.push(`${result.webhooks.eventsWithTwoIds} event(s) under two webhook-ids`);
    const fiveHundreds = Object.entries({ ...ledger.sendStatuses, ...ledger.inboundStatuses }).filter(
      ([status]) => /^5\d\d$/.test(status) && status !== '503',
    );
    if (fiveHundreds.length > 0) failures.push(`answers ${fiveHundreds.map(([s, n]) => `${s}×${n}`).join(', ')}`);
    if (integrityCheck !== 'ok') failures.push(`integrity_check: ${integrityCheck}`);
    if (result.sends.acknowledged === 0 || result.inbound.acknowledged === 0)
      failures.push('no load was acknowledged: the run proves nothing');

    return {
      cycles: options.cycles,
      durationSeconds: Math.round((performance.now() - started) / 100) / 10,
      sends: {
        attempted: ledger.sendAttempts,
        acknowledged: result.sends.acknowledged,
        retriedAfterCut: ledger.retriedAfterCut,
        statuses: ledger.sendStatuses,
        lost: result.sends.lost,
        keysUnderTwoIds: result.sends.keysUnderTwoIds,
        notRead: result.sends.notRead,
      },
      inbound: {
        attempted: ledger.inboundAttempts,
        acknowledged: result.inbound.acknowledged,
        statuses: ledger.inboundStatuses,
        lost: result.inbound.lost,
        lostSamples: result.inbound.lostSamples,
      },
      webhooks: { ...result.webhooks, receiverOutages: receiver.outages },
      integrityCheck,
      failures,
    };
  } finally {
    gateway.release();
    await load?.stop().catch(() => undefined);
    await flapping?.stop().catch(() => undefined);
    await gateway.kill();
    await receiver.down();
    process.removeListener('exit', killOnExit);
    // CHAOS_KEEP_DATA=1 keeps the store of the run for a post-mortem.
    if (process.env.CHAOS_KEEP_DATA === '1') {
      data.keep();
      log(`data kept in ${data.path}`);
    } else data.remove();
  }
}
