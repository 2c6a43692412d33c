/**
 * /openapi.json is the reference users read: it must be a valid OpenAPI 3.1 document (checked with a
 * well-kept validator), with tags in reading order, every error answer as problem+json, and the
 * headers the routes read declared.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, ERROR_CODES, type ErrorCode } from '../../src/errors/error-codes.js';
import { startTestGateway } from '../support/gateway.js';

type Operation = {
  operationId: string;
  tags: string[];
  parameters: Array<{ name: string; in: string }>;
  responses: Record<string, { content?: Record<string, unknown> }>;
};

describe('the OpenAPI document', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let doc: {
    tags: Array<{ name: string; description?: string }>;
    info: { description: string };
    paths: Record<string, Record<string, Operation>>;
  };
  beforeAll(async () => {
    gateway = await startTestGateway();
    doc = (await gateway.api('GET', '/openapi.json')).body;
  });
  afterAll(async () => {
    await gateway.close();
  });

  const operations = () => Object.values(doc.paths).flatMap((byMethod) => Object.values(byMethod));

  it('is valid OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('orders its tags for a reader, each described, the sandbox last', () => {
    const names = doc.tags.map((t) => t.name);
    expect(names.slice(0, 6)).toEqual(['Devices', 'Session', 'Sending', 'Outbox', 'Webhooks', 'Contacts']);
    expect(names.at(-1)).toBe('Sandbox');
    for (const tag of doc.tags) expect(tag.description, tag.name).toMatch(/\w{3,}/);
    expect(doc.info.description).toContain('X-Device-Key');
    expect(doc.info.description).toContain('/session/state');
  });

  it('gives every error answer an example per code it can carry, each code from the catalogue with that status', () => {
    const missing: string[] = [];
    for (const operation of operations().filter((o) => o.operationId !== 'health')) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        const content = response.content?.['application/problem+json'] as
          { examples?: Record<string, { value: { code: string; status: number } }> } | undefined;
        const examples = Object.entries(content?.examples ?? {});
        if (examples.length === 0) missing.push(`${operation.operationId} ${status}`);
        for (const [code, example] of examples) {
          expect(ERROR_CATALOGUE[code as ErrorCode]?.status, `${operation.operationId} ${status} ${code}`).toBe(
            Number(status),
          );
          expect(example.value).toMatchObject({ code, status: Number(status) });
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('publishes `code` as the enum of the error catalogue', () => {
    const problem = (
      doc as unknown as { components: { schemas: { Problem: { properties: { code: { enum: string[] } } } } } }
    ).components.schemas.Problem;
    expect(problem.properties.code.enum).toEqual(ERROR_CODES);
  });

  it('describes every error answer as problem+json (but /health, whose 503 is its own report)', () => {
    for (const operation of operations().filter((o) => o.operationId !== 'health')) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        expect(Object.keys(response.content ?? {}), `${operation.operationId} ${status}`).toEqual([
          'application/problem+json',
        ]);
      }
    }
  });

  it('declares the Idempotency-Key header on every send', () => {
    const sends = operations().filter((o) => o.tags.includes('Sending') && o.operationId.startsWith('send'));
    expect(sends.length).toBeGreaterThanOrEqual(8);
    for (const send of sends)
      expect(
        send.parameters.filter((p) => p.in === 'header').map((p) => p.name),
        send.operationId,
      ).toEqual(['Idempotency-Key']);
  });

  it('declares the Idempotency-Key header on every status post (a send to status@broadcast)', () => {
    const posts = operations().filter((o) => o.operationId.startsWith('postStatus'));
    expect(posts.map((o) => o.operationId).sort()).toEqual(['postStatusImage', 'postStatusText', 'postStatusVideo']);
    for (const post of posts)
      expect(
        post.parameters.filter((p) => p.in === 'header').map((p) => p.name),
        post.operationId,
      ).toEqual(['Idempotency-Key']);
  });

  it('declares POST /mcp’s JSON-RPC body and answer', () => {
    const mcp = doc.paths['/mcp'].post as unknown as {
      requestBody?: { content: Record<string, { schema: unknown }> };
      responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
    };
    expect(JSON.stringify(mcp.requestBody?.content['application/json']?.schema)).toContain('"jsonrpc"');
    expect(JSON.stringify(mcp.responses['200']?.content?.['application/json']?.schema)).toContain('"result"');
  });
});
