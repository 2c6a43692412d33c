/**
 * /health after the event store failed to write and came back: healthy again without any traffic. The flag
 * "the last write failed" was cleared only by the next successful write, so an idle gateway (or one a readiness
 * probe keeps traffic away from because of that very 503) stayed degraded for good.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DelegatingEventStore } from '../../src/eventstore/delegating-store.js';
import {
  type AppendOptions,
  type AppendResult,
  type NewEvent,
  type Snapshot,
  StoreUnavailableError,
} from '../../src/eventstore/event-store.js';
import { type Gateway, startGateway } from '../../src/gateway.js';
import { eventually } from '../support/eventually.js';
import { type Api, apiClient, testConfig } from '../support/gateway.js';

/** A store that can be made to refuse every write, as one whose server or disk is gone. */
class RefusingStore extends DelegatingEventStore {
  down = false;
  private refuse(): void {
    if (this.down)
      throw new StoreUnavailableError('connection refused', {
        cause: Object.assign(new Error('ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
  }
  override ping(): Promise<boolean> {
    return this.down ? Promise.resolve(false) : this.inner.ping();
  }
  override async append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    this.refuse();
    return this.inner.append(streamId, events, options);
  }
  override async saveSnapshot(streamId: string, snapshot: Snapshot): Promise<void> {
    this.refuse();
    return this.inner.saveSnapshot(streamId, snapshot);
  }
}

describe('/health when the store comes back', () => {
  let gateway: Gateway;
  let api: Api;
  let store: RefusingStore | undefined;
  beforeAll(async () => {
    gateway = await startGateway(testConfig({ DEFAULT_ENGINE: 'sandbox' }), {
      logger: pino({ level: 'silent' }),
      validateResponses: true,
      wrapStore: (inner) => (store = new RefusingStore(inner)),
    });
    api = apiClient(gateway.url);
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('is degraded while writes fail, and ok again once the store takes writes, with no other request', async () => {
    store!.down = true;
    const refused = await api('POST', '/devices', { admin: true, json: { id: 'refused', name: 'x' } });
    expect({ status: refused.status, code: refused.body?.code }).toEqual({ status: 503, code: 'store_unavailable' });
    expect((await api('GET', '/health')).body).toMatchObject({
      status: 'degraded',
      store: { ok: false },
      disk: { writeFailing: true },
    });
    store!.down = false;
    const healthy = await eventually(
      async () => {
        const health = await api('GET', '/health');
        return health.status === 200 ? health.body : undefined;
      },
      'healthy again',
      10_000,
    );
    expect(healthy).toMatchObject({ status: 'ok', store: { ok: true }, disk: { writeFailing: false } });
  });
});
