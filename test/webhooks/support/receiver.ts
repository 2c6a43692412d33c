import { once } from 'node:events';
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  /** The request target: path and query. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The raw body, as signed. */
  body: string;
  envelope: { id: string; event: string; deviceId: string; timestamp: string; data: any };
  /** 1 for the first request carrying this webhook-id, 2 for the second… */
  attemptOfId: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Answer only once this settles (a slow receiver). */
  after?: Promise<unknown>;
}

export type Responder = (request: ReceivedRequest) => Reply;

/**
 * A webhook receiver on 127.0.0.1 that records every request and answers as `respond` says (200 by default).
 * waitUntil() resolves when a condition over the recorded requests holds.
 */
export class TestReceiver {
  readonly requests: ReceivedRequest[] = [];
  respond: Responder = () => ({ status: 200 });
  private readonly seen = new Map<string, number>();
  private waiters: Array<{ check: () => boolean; resolve: () => void }> = [];

  private constructor(private readonly server: Server) {}

  static async start(port = 0): Promise<TestReceiver> {
    const server = createServer();
    const receiver = new TestReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const id = String(req.headers['webhook-id'] ?? '');
        const attemptOfId = (receiver.seen.get(id) ?? 0) + 1;
        receiver.seen.set(id, attemptOfId);
        const request: ReceivedRequest = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body,
          envelope: safeJson(body),
          attemptOfId,
        };
        receiver.requests.push(request);
        receiver.check();
        const reply = receiver.respond(request);
        if (reply.after) await reply.after.catch(() => undefined);
        if (res.destroyed) return;
        res.writeHead(reply.status, reply.headers);
        res.end(reply.body ?? '');
        receiver.check();
      });
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** Requests answered or not, of one device, in arrival order. */
  of(deviceId: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.envelope?.deviceId === deviceId);
  }

  /** Resolves once `condition` holds (checked on every request and after every answer), or rejects after `timeoutMs`. */
  waitUntil(condition: () => boolean, timeoutMs = 15_000, what = 'the expected webhooks'): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = { check: condition, resolve };
      this.waiters.push(waiter);
      setTimeout(() => {
        if (!this.waiters.includes(waiter)) return;
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`timed out waiting for ${what}; received ${this.requests.length} request(s)`));
      }, timeoutMs).unref();
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private check(): void {
    const ready = this.waiters.filter((w) => w.check());
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const waiter of ready) waiter.resolve();
  }
}

function safeJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
