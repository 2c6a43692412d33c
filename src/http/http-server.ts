/**
 * The HTTP server under the Koa application: its timeouts, its answers to what never reaches Koa (parser
 * errors, CONNECT, a bad Expect), and the connection guard, so that slow, idle or numerous sockets from one
 * address cannot keep other clients out.
 */
import { type IncomingMessage, type Server, ServerResponse, createServer } from 'node:http';
import type { Duplex } from 'node:stream';
import { answerClientError, answerConnect, answerFailedExpectation } from './client-errors.js';
import { type ConnectionLimits, type Refusal, guardConnections } from './connection-guard.js';

/**
 * A connection must have sent its whole request head within this long of opening (or of its previous
 * request's end); a slowloris is answered 408 and closed.
 */
const HEADERS_TIMEOUT_MS = 10_000;
/** How often the server looks for connections past HEADERS_TIMEOUT_MS (Node's default, 30 s, let them stay up to 50 s). */
const TIMEOUT_CHECK_MS = 1_000;
/** A whole request, body included (large bodies also have their own stall timeout, src/http/body/body-gate.ts). */
const REQUEST_TIMEOUT_MS = 60_000;
/** An idle keep-alive connection is closed after this long, and so is a new one that sends nothing at all. */
const IDLE_TIMEOUT_MS = 5_000;

export interface ListenOptions {
  port: number;
  host: string;
  limits: Omit<ConnectionLimits, 'idleMs'>;
  onRefused?: (reason: Refusal) => void;
  /** A failure of the listening socket once listening (an accept refused for want of file descriptors). */
  onError?: (error: Error) => void;
}

const UPGRADE = Symbol('upgrade');
type UpgradeRequest = IncomingMessage & { [UPGRADE]?: { socket: Duplex; head: Buffer } };

/** The socket and first bytes of an upgrade request (undefined for a plain request). */
export const upgradeOf = (req: IncomingMessage) => (req as UpgradeRequest)[UPGRADE];

export async function listen(handler: Parameters<typeof createServer>[1], options: ListenOptions): Promise<Server> {
  const server = createServer(
    {
      // Node answers a missing Host with a bare 400; the app answers it with problem+json (src/http/app.ts).
      requireHostHeader: false,
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      keepAliveTimeout: IDLE_TIMEOUT_MS,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    },
    handler,
  );
  guardConnections(server, { ...options.limits, idleMs: IDLE_TIMEOUT_MS }, options.onRefused);
  // Errors of the HTTP parser and a bad Expect answer problem+json too.
  server.on('clientError', answerClientError);
  server.on('checkExpectation', answerFailedExpectation);
  server.on('connect', answerConnect);
  // Upgrade requests (WebSocket) go through the same application as any other (request ids, the Host check,
  // the limit of failed authentications, the routes and their keys): a route that takes the upgrade finds the
  // socket and the head in `upgradeOf(req)`; any other answer is written to the socket, which then closes.
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    (req as UpgradeRequest)[UPGRADE] = { socket, head };
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as never);
    res.on('finish', () => {
      res.detachSocket(socket as never);
      socket.end();
    });
    socket.on('error', () => socket.destroy());
    handler?.(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Node reports a failed accept (EMFILE in a connection flood) as the server's 'error': without a listener
  // that would end the process; the server goes on accepting once descriptors are free.
  server.on('error', (error) => options.onError?.(error));
  return server;
}
