/**
 * The HTTP server under the Koa application: its timeouts, its answers to what never reaches Koa (parser
 * errors, CONNECT, a bad Expect), and the connection guard, so that slow, idle or numerous sockets from one
 * address cannot keep other clients out.
 */
import { type Server, createServer } from 'node:http';
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
