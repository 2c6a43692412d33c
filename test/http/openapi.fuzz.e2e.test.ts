/**
 * The standing fuzz test: every operation of /openapi.json gets generated bad requests (fast-check):
 * fuzzed path parameters, queries and bodies shaped after the operation's schema, wrong content types,
 * broken or unknown Content-Encodings, every kind of credential; then garbage at the HTTP parser level
 * over raw sockets. Whatever comes in: no 5xx, every error is problem+json with a code, and a refused
 * request changes nothing (the event log's head, files under DATA_DIR). Bounded in count, so that it
 * stays well under a minute.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync, gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startTestGateway } from '../support/gateway.js';
import { type RawAnswer, parseRaw, rawExchange, rawRequest } from '../support/raw-http.js';

/** Requests per operation, where time allows (see BUDGET_MS). */
const RUNS_PER_OPERATION = 100;
const RAW_GARBAGE_RUNS = 150;
/**
 * On a slow or loaded machine the runs of an operation stop at its share of what is left of this budget (never a
 * failure), so the test ends in about this long however many operations the API has: with a fixed few seconds for each
 * (as before) the ~150 operations outgrew the test's timeout on a slow day under load.
 */
const BUDGET_MS = 50_000;
/** Every operation gets this long at least, so that even a slow machine makes some runs of each. */
const MIN_OPERATION_MS = 150;
const SEED = Number(process.env.FUZZ_SEED ?? 20_240_901);

interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: Array<{ in: string; name: string; schema?: Schema }>;
  bodySchema?: Schema;
  multipart: boolean;
}
interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  enum?: unknown[];
  pattern?: string;
  items?: Schema;
}

/** Path values that reach a real resource are used sparingly: they are what turns a request valid. */
const REAL_DEVICE = 'fuzz';
/** Operations that start work in the background (a session, a simulated phone) never get the real device. */
const BACKGROUND = new Set([
  'openSession',
  'rebootSession',
  'sandboxScan',
  'sandboxDisconnect',
  'sandboxLogout',
  'deleteDevice',
]);

const weird = fc.constantFrom(
  '',
  ' ',
  '..',
  '%00',
  '%2e%2e%2f',
  '%ZZ',
  '%',
  '\u0000',
  '😀',
  'a'.repeat(300),
  '__proto__',
  'constructor',
  '-1',
  '1e309',
  'NaN',
  'null',
  'true',
  '[]',
  '{}',
  "' OR 1=1 --",
  '<script>',
  '4915112345678',
  '3EB0ABCDEF0123456789AB',
  '00000000-0000-0000-0000-000000000000',
  'http://127.0.0.1:1/x',
  'http://[::7f00:1]/x',
  'http://localhost./x',
  'https://example.com:99999/x',
);
const text = fc.oneof(
  weird,
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.integer().map(String),
);

function valueFor(schema: Schema | undefined): fc.Arbitrary<unknown> {
  const anything = fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 3 }),
    text,
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant([]),
    fc.constant({}),
    fc.constant('x'.repeat(70_000)),
  );
  if (!schema) return anything;
  const typed: fc.Arbitrary<unknown>[] = [anything];
  if (schema.enum) typed.push(fc.constantFrom(...schema.enum));
  if (schema.type === 'string') typed.push(text);
  if (schema.type === 'number' || schema.type === 'integer')
    typed.push(fc.oneof(fc.integer(), fc.double(), fc.constantFrom(91, -181, 1e308, -0)));
  if (schema.type === 'boolean') typed.push(fc.boolean());
  if (schema.type === 'object' && schema.properties) typed.push(objectFor(schema));
  return fc.oneof(...typed);
}

function objectFor(schema: Schema): fc.Arbitrary<Record<string, unknown>> {
  const names = Object.keys(schema.properties ?? {});
  const keys = fc.oneof(
    names.length > 0 ? fc.constantFrom(...names) : fc.constant('x'),
    fc.constantFrom('extra', '__proto__', 'constructor', 'base64'),
    fc.string({ maxLength: 8 }),
  );
  return fc.dictionary(keys, fc.constant(undefined), { maxKeys: names.length + 2 }).chain((dict) => {
    const chosen = Object.keys(dict);
    return fc.tuple(...chosen.map((name) => valueFor(schema.properties?.[name]))).map((values) => {
      const body: Record<string, unknown> = {};
      chosen.forEach((name, i) =>
        Object.defineProperty(body, name, { value: values[i], enumerable: true, writable: true, configurable: true }),
      );
      return body;
    });
  });
}

interface Fuzzed {
  path: string;
  query: string;
  auth: string;
  contentType: string | undefined;
  encoding: string | undefined;
  body: Buffer | undefined;
}

function requestFor(op: Operation): fc.Arbitrary<Fuzzed> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const deviceValues = BACKGROUND.has(op.operationId)
    ? fc.constantFrom('ghost', 'other')
    : fc.constantFrom(REAL_DEVICE, 'ghost', 'other');
  const segment = (name: string) =>
    fc.oneof(
      { arbitrary: name === 'deviceId' ? deviceValues : text, weight: 3 },
      { arbitrary: text.map((t) => encodeURIComponent(t)), weight: 2 },
      { arbitrary: fc.constantFrom('%ZZ', '%', '%E0%A4%A', '..%2F..%2Fetc'), weight: 1 },
    );
  const path = fc.tuple(...pathParams.map((p) => segment(p.name))).map((values) => {
    let out = op.path;
    pathParams.forEach((p, i) => {
      const value = String(values[i]);
      // Raw values with characters that may not appear in a request line are encoded.
      out = out.replace(
        `{${p.name}}`,
        /^[\x21-\x7e]*$/.test(value) && value !== '' ? value : encodeURIComponent(value) || '%20',
      );
    });
    return out;
  });
  const query = fc
    .array(
      fc.tuple(
        fc.oneof(
          queryParams.length > 0 ? fc.constantFrom(...queryParams.map((p) => p.name)) : fc.constant('q'),
          fc.constantFrom('x', '__proto__', 'limit'),
        ),
        text,
      ),
      { maxLength: 4 },
    )
    .map((pairs) =>
      pairs.length === 0
        ? ''
        : `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`,
    );
  const auth = fc.oneof(
    { arbitrary: fc.constantFrom('admin', 'device'), weight: 6 },
    { arbitrary: fc.constantFrom('none', 'wrong', 'bearer', 'other-device', 'both'), weight: 2 },
  );
  const jsonBody = op.bodySchema
    ? objectFor(op.bodySchema).map((b) => Buffer.from(JSON.stringify(b)))
    : fc.jsonValue({ maxDepth: 2 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null'));
  const body = fc.oneof(
    { arbitrary: jsonBody, weight: 6 },
    { arbitrary: fc.constant(undefined), weight: 1 },
    { arbitrary: fc.string({ maxLength: 60 }).map((s) => Buffer.from(s)), weight: 1 },
    { arbitrary: fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)), weight: 1 },
    {
      arbitrary: fc
        .constantFrom(
          '{"a":'.repeat(2000),
          `[${'['.repeat(5000)}`,
          '{"base64":"AAAA',
          '{"base64":"data:,"}',
          '{"to":"4915112345678","base64":"////"}',
        )
        .map((s) => Buffer.from(s)),
      weight: 1,
    },
  );
  const contentType = fc.oneof(
    { arbitrary: fc.constant('application/json'), weight: 6 },
    {
      arbitrary: fc.constantFrom(
        undefined,
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=xyz',
        'multipart/form-data',
        'application/json; charset=latin1',
        'application/*',
        '*/*',
        ';;;',
      ),
      weight: 2,
    },
  );
  const encoding = fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 6 },
    {
      arbitrary: fc.constantFrom(
        'gzip',
        'deflate',
        'br',
        'gzip-valid',
        'deflate-valid',
        'identity',
        'gzip, gzip',
        'zstd',
        'x-gzip',
      ),
      weight: 2,
    },
  );
  return fc.record({ path, query, auth, contentType, encoding, body });
}

function headersOf(request: Fuzzed, keys: { device: string; other: string }): Record<string, string> {
  const headers: Record<string, string> = {};
  switch (request.auth) {
    case 'admin':
      headers['x-admin-key'] = ADMIN_KEY;
      break;
    case 'device':
      headers['x-device-key'] = keys.device;
      break;
    case 'wrong':
      headers['x-device-key'] = 'dk_wrong_key_000000000000000000000000';
      break;
    case 'bearer':
      headers.authorization = `Bearer ${ADMIN_KEY}`;
      break;
    case 'other-device':
      headers['x-device-key'] = keys.other;
      break;
    case 'both':
      headers['x-admin-key'] = 'not-the-admin-key-0000';
      headers['x-device-key'] = keys.device;
      break;
  }
  if (request.contentType) headers['content-type'] = request.contentType;
  if (request.encoding) headers['content-encoding'] = request.encoding.replace(/-valid$/, '');
  return headers;
}

function bodyOf(request: Fuzzed): Buffer | undefined {
  if (!request.body) return undefined;
  if (request.encoding === 'gzip-valid') return gzipSync(request.body);
  if (request.encoding === 'deflate-valid') return deflateSync(request.body);
  return request.body;
}

describe('fuzzing every operation of /openapi.json', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let log: Database.Database;
  let operations: Operation[];
  const keys = { device: '', other: '' };
  const histogram: Record<string, number> = {};
  let total = 0;

  beforeAll(async () => {
    gateway = await startTestGateway({
      UNAUTHENTICATED_RATE_PER_MINUTE: '1000000',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false',
      MEDIA_MAX_BYTES: '65536',
      MEDIA_FILE_MAX_BYTES: '131072',
    });
    keys.device = (
      await gateway.api('POST', '/devices', { admin: true, json: { id: REAL_DEVICE, name: 'F', engine: 'sandbox' } })
    ).body.deviceKey;
    keys.other = (
      await gateway.api('POST', '/devices', { admin: true, json: { id: 'other', name: 'O', engine: 'sandbox' } })
    ).body.deviceKey;
    log = new Database(join(gateway.dataDir, 'events.sqlite'), { readonly: true });
    const doc = (await gateway.api('GET', '/openapi.json')).body as { paths: Record<string, Record<string, any>> };
    // Event streams answer 200 and stay open: their bad input is tested in test/stream/, not here.
    const isStream = (op: any) => Boolean(op.responses?.['200']?.content?.['text/event-stream']);
    operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => !isStream(op))
        .map(([method, op]) => ({
          method: method.toUpperCase(),
          path,
          operationId: op.operationId as string,
          parameters: (op.parameters ?? []) as Operation['parameters'],
          bodySchema: (op.requestBody?.content?.['application/json']?.schema ?? undefined) as Schema | undefined,
          multipart: Boolean(op.requestBody?.content?.['multipart/form-data']),
        })),
    );
  });
  afterAll(async () => {
    log?.close();
    console.log(
      `fuzz: ${total} requests; statuses ${JSON.stringify(Object.fromEntries(Object.entries(histogram).sort()))}`,
    );
    await gateway?.close();
  });

  /** What a refused request must leave alone: the log's head outside the sessions' and outputs' own streams, and the files. */
  const state = () => {
    const head = (
      log
        // Broker outputs a valid request made record their errors and positions in the background.
        .prepare(
          "SELECT COALESCE(MAX(position), 0) AS head FROM events WHERE stream_id NOT LIKE 'session-%' AND stream_id NOT LIKE 'output-%'",
        )
        .get() as { head: number }
    ).head;
    const media = join(gateway.dataDir, 'media');
    const files = readdirSync(media, { recursive: true }).length;
    return { head, files };
  };

  const check = (what: string, answer: RawAnswer) => {
    total++;
    histogram[answer.status] = (histogram[answer.status] ?? 0) + 1;
    expect(answer.status, what).toBeGreaterThanOrEqual(200);
    expect(answer.status, `${what}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
    if (answer.status >= 400) {
      expect(answer.headers['content-type'], what).toContain('application/problem+json');
      const problem = JSON.parse(answer.text) as { status: number; code: string };
      expect(problem.status, what).toBe(answer.status);
      expect(typeof problem.code, what).toBe('string');
    }
  };

  it('answers every generated request with a 2xx or a problem+json 4xx, and refusals change nothing', async () => {
    expect(operations.length).toBeGreaterThan(30);
    const started = performance.now();
    for (const [index, op] of operations.entries()) {
      const left = BUDGET_MS - (performance.now() - started);
      await fc.assert(
        fc.asyncProperty(requestFor(op), async (request) => {
          const before = state();
          const target = `${request.path}${request.query}`;
          const answer = await rawRequest(gateway.url, op.method, target, headersOf(request, keys), bodyOf(request));
          const what = `${op.method} ${target} (${op.operationId}, ${request.auth}, ${request.contentType}, ${request.encoding})`;
          check(what, answer);
          if (answer.status >= 400) expect(state(), `${what} changed state`).toEqual(before);
        }),
        {
          numRuns: RUNS_PER_OPERATION,
          seed: SEED + index,
          endOnFailure: true,
          interruptAfterTimeLimit: Math.max(left / (operations.length - index), MIN_OPERATION_MS),
          markInterruptAsFailure: false,
        },
      );
    }
  }, 90_000);

  it('answers parser-level garbage over raw sockets with problem+json', async () => {
    const token = fc.stringMatching(/^[!-~]{0,12}$/);
    const headerLine = fc.oneof(
      fc.tuple(token, fc.string({ maxLength: 30 })).map(([k, v]) => `${k}: ${v}`),
      fc.constantFrom(
        'X-Big: ' + 'b'.repeat(20_000),
        'Bad Header',
        ': empty',
        'X-Nul: a\u0000b',
        'Host: a\r\nHost: b',
        'Expect: 123-nope',
        'X-Folded: a\r\n folded',
      ),
      fc.uint8Array({ maxLength: 30 }).map((a) => Buffer.from(a).toString('latin1').replace(/\r|\n/g, '')),
    );
    const garbage = fc.oneof(
      fc
        .tuple(
          fc.constantFrom('GET', 'POST', 'PUT', 'BREW', 'G\u0000T', '', 'DELETE'),
          fc.constantFrom('/health', '/devices', '/devices/fuzz/send/text', '*', 'http://x/', '/%00', ''),
          fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/9.9', 'HTTP/1.1 extra', ''),
          fc.array(headerLine, { maxLength: 4 }),
        )
        .map(
          ([method, path, version, headers]) =>
            `${method} ${path} ${version}\r\n${['Host: 127.0.0.1', 'Connection: close', ...headers].join('\r\n')}\r\n\r\n`,
        ),
      fc
        .uint8Array({ minLength: 1, maxLength: 300 })
        .map((a) => Buffer.concat([Buffer.from(a), Buffer.from('\r\n\r\n')]).toString('latin1')),
    );
    const before = state();
    let silent = 0;
    await fc.assert(
      fc.asyncProperty(garbage, async (bytes) => {
        const raw = await rawExchange(gateway.url, Buffer.from(bytes, 'latin1'), 400);
        if (raw === '') {
          silent++; // the parser still waits for more (a request it could not yet judge): nothing was answered
          return;
        }
        const answer = parseRaw(raw);
        total++;
        histogram[`raw ${answer.status}`] = (histogram[`raw ${answer.status}`] ?? 0) + 1;
        expect(answer.status, JSON.stringify(bytes.slice(0, 120))).toBeGreaterThanOrEqual(200);
        expect(answer.status, JSON.stringify(bytes.slice(0, 120))).toBeLessThan(500);
        if (answer.status >= 400)
          expect(answer.type, JSON.stringify(bytes.slice(0, 120))).toContain('application/problem+json');
      }),
      { numRuns: RAW_GARBAGE_RUNS, seed: SEED, endOnFailure: true },
    );
    histogram['raw unanswered'] = silent;
    expect(state()).toEqual(before);
  }, 60_000);
});
