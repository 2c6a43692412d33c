import Koa from 'koa';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { problemResponses } from '../../../src/http/middleware/problem-responses.js';
import { type RequestState, requestId } from '../../../src/http/middleware/request-id.js';
import { apiClient, startTestGateway } from '../../support/gateway.js';

describe('failures the caller cannot cause', () => {
  it('an unexpected error is a 500 problem+json whose request id is in the log', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const app = new Koa<RequestState>();
    app.silent = true;
    app.use(requestId(logger));
    app.use(problemResponses());
    app.use(() => {
      throw new Error('database exploded: secret internals');
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as { port: number };
    const answer = await apiClient(`http://127.0.0.1:${port}`)('GET', '/anything');
    server.close();
    expect(answer.status).toBe(500);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(answer.body.code).toBe('internal_error');
    expect(JSON.stringify(answer.body)).not.toContain('secret internals');
    expect(answer.body.requestId).toBe(answer.headers.get('x-request-id'));
    expect(lines.some((line) => line.requestId === answer.body.requestId && line.msg === 'unexpected error')).toBe(
      true,
    );
  });

  it('a store that cannot be reached is 503 store_unavailable, and /health says degraded', async () => {
    const gateway = await startTestGateway();
    const { api } = gateway;
    expect((await api('POST', '/devices', { admin: true, json: { id: 'before', name: 'b' } })).status).toBe(201);
    await gateway.store.close();
    const create = await api('POST', '/devices', { admin: true, json: { id: 'after', name: 'a' } });
    expect(create.status).toBe(503);
    expect(create.body.code).toBe('store_unavailable');
    for (const [method, path, json] of [
      ['PATCH', '/devices/before', { name: 'x' }],
      ['DELETE', '/devices/before', undefined],
    ] as const) {
      const answer = await api(method, path, { admin: true, json });
      expect(answer.status, `${method} ${path}`).toBe(503);
    }
    const health = await api('GET', '/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'degraded', store: { kind: 'sqlite', ok: false } });
    await gateway.close();
  });
});
