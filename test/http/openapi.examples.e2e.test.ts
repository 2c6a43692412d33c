/**
 * The OpenAPI document shows an example for every request body and every JSON answer, and one envelope per
 * webhook kind in its `webhooks` section; each example fits the schema beside it.
 */
import { Compile } from 'typebox/compile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_KINDS } from '../../src/webhooks/envelope.js';
import { startTestGateway } from '../support/gateway.js';

type Media = Record<string, { schema?: unknown; example?: unknown }>;
type Operation = {
  operationId: string;
  requestBody?: { content: Media };
  responses: Record<string, { content?: Media }>;
};

/** Whether `example` fits `schema` (plain JSON Schema as published). */
function check(schema: unknown, example: unknown): string[] {
  const compiled = Compile(schema as never);
  return compiled.Check(example)
    ? []
    : [...compiled.Errors(example)].map(
        (e) => `${(e as { instancePath: string }).instancePath} ${(e as { message: string }).message}`,
      );
}

describe('examples in the OpenAPI document', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let doc: { paths: Record<string, Record<string, Operation>>; webhooks: Record<string, { post: Operation }> };
  beforeAll(async () => {
    gateway = await startTestGateway();
    doc = (await gateway.api('GET', '/openapi.json')).body;
  });
  afterAll(() => gateway.close());

  it('every request body and every JSON answer has an example that fits its schema', () => {
    let checked = 0;
    const wrong: string[] = [];
    for (const [path, byMethod] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(byMethod)) {
        const label = `${method.toUpperCase()} ${path}`;
        const json = operation.requestBody?.content['application/json'];
        if (json) {
          if (json.example === undefined) wrong.push(`${label} request: no example`);
          else
            for (const error of check(json.schema, json.example))
              wrong.push(`${label} request: ${error} in ${JSON.stringify(json.example)}`);
          checked++;
        }
        for (const [status, response] of Object.entries(operation.responses)) {
          const answer = response.content?.['application/json'];
          if (!answer) continue;
          if (answer.example === undefined) wrong.push(`${label} ${status}: no example`);
          else
            for (const error of check(answer.schema, answer.example))
              wrong.push(`${label} ${status}: ${error} in ${JSON.stringify(answer.example)}`);
          checked++;
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(60);
  });

  it('documents every webhook kind in `webhooks`, an envelope with its payload, with an example', () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENT_KINDS, 'webhook.test'].sort());
    for (const [kind, { post }] of Object.entries(doc.webhooks)) {
      const body = post.requestBody!.content['application/json'];
      expect(body.example, kind).toMatchObject({ event: kind });
      expect(check(body.schema, body.example), kind).toEqual([]);
    }
  });
});
