/**
 * Stopping the gateway (SIGTERM → close()) while requests are under way: each is answered before the
 * connections go. A send cut off after its append would be recorded but never acknowledged, and a client
 * without an Idempotency-Key would send it again.
 */
import { connect } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { DelegatingEventStore } from '../src/eventstore/delegating-store.js';
import type { AppendOptions, AppendResult, NewEvent } from '../src/eventstore/event-store.js';
import { SqliteEventStore } from '../src/eventstore/sqlite/sqlite-event-store.js';
import { startGateway } from '../src/gateway.js';
import { outboxStream } from '../src/messages/message-events.js';
import { eventually } from './support/eventually.js';
import { apiClient, testConfig } from './support/gateway.js';

/** While held, appends to outbox streams wait for `release()` (a slow disk): sends are under way when the gateway stops. */
class HeldOutboxAppends extends DelegatingEventStore {
  private held: Promise<void> | undefined;
  release = () => undefined as void;
  /** Outbox events whose append has begun: each is a request the server has read whole and is answering. */
  begun = 0;

  hold(): void {
    this.held = new Promise((resolve) => (this.release = resolve));
  }

  override async append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    if (this.held && streamId.startsWith('outbox-')) {
      this.begun += events.length;
      await this.held;
    }
    return this.inner.append(streamId, events, options);
  }
}

/** Whether a new connection to `url` is refused: the server has stopped taking connections. */
function refusesConnections(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('stopping the gateway', () => {
  it('answers the requests under way before its connections go, and every 202 is in the log', async () => {
    let slow: HeldOutboxAppends | undefined;
    const config = testConfig();
    const gateway = await startGateway(config, {
      logger: pino({ level: 'silent' }),
      validateResponses: true,
      wrapStore: (store) => (slow = new HeldOutboxAppends(store)),
    });
    const api = apiClient(gateway.url);
    const created = await api('POST', '/devices', { admin: true, json: { id: 'shop', name: 'Shop' } });
    slow!.hold();
    const sends = Array.from({ length: 20 }, (_, i) =>
      api('POST', '/devices/shop/send/text', {
        deviceKey: created.body.deviceKey,
        json: { to: '4915112345678', text: `m${i}` },
      }).then(
        (answer) => ({ status: answer.status, waMessageId: answer.body.waMessageId as string }),
        (error: unknown) => ({ status: `no answer: ${(error as Error).message}`, waMessageId: '' }),
      ),
    );
    // Every request under way on the server (one not yet sent when it stops taking connections is refused, rightly).
    await eventually(() => slow!.begun >= 20, 'the 20 sends under way');
    const closed = gateway.close();
    // The appends land only once the gateway has stopped taking connections: its close waits for them.
    await eventually(() => refusesConnections(gateway.url), 'the gateway stopped taking connections');
    slow!.release();
    const answers = await Promise.all(sends);
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202));
    await closed;
    const log = new SqliteEventStore(join(config.dataDir, 'events.sqlite'));
    try {
      const queued = (await log.readStream(outboxStream('shop'))).map(
        (e) => (e.data as { waMessageId: string }).waMessageId,
      );
      expect(new Set(queued)).toEqual(new Set(answers.map((a) => a.waMessageId)));
    } finally {
      await log.close();
    }
  });
});
