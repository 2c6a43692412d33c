import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Problem } from '../../../src/http/problem.js';
import { type Base64Path, readJsonMediaBody } from '../../../src/http/body/json-media-body.js';
import { tempDir } from '../../support/gateway.js';

const dir = tempDir('dmg-scan-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const limits = { media: 4096, fields: 1024, total: 16_384 };
const tooLarge = () => new Problem(413, 'payload_too_large', 'too large');
let n = 0;

/** Feeds `text` in chunks of the given sizes (cycled). */
async function read(text: string | Buffer, sizes: number[] = [7], at?: Base64Path) {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let at = 0, k = 0; at < bytes.length; k++) {
    const size = Math.max(1, sizes[k % sizes.length]);
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  const path = join(dir, `spool-${n++}`);
  const result = await readJsonMediaBody(
    (async function* () {
      yield* chunks;
    })(),
    limits,
    path,
    tooLarge,
    at,
  );
  return { ...result, bytes: result.spooled ? readFileSync(path) : undefined };
}

async function refusal(
  text: string,
  sizes?: number[],
  at?: Base64Path,
): Promise<{ status: number; code: string; path?: string }> {
  try {
    await read(text, sizes, at);
  } catch (error) {
    if (error instanceof Problem)
      return { status: error.status, code: error.code, path: error.extra.errors?.[0]?.path };
    throw error;
  }
  throw new Error(`accepted: ${text.slice(0, 60)}`);
}

describe('the streaming reader of JSON media bodies', () => {
  it('decodes base64 to a file, whatever the chunking, and keeps the other fields', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 1, maxLength: 3000 }),
        fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        async (media, sizes, dataUrl) => {
          const text = `${dataUrl ? 'data:image/png;base64,' : ''}${Buffer.from(media).toString('base64')}`;
          const json = JSON.stringify({
            to: '4915112345678',
            caption: 'a "quoted" \\ caption',
            base64: text,
            nested: { base64: 'x' },
          });
          const result = await read(json, sizes);
          expect(result.body).toEqual({
            to: '4915112345678',
            caption: 'a "quoted" \\ caption',
            nested: { base64: 'x' },
          });
          expect(result.bytes!.equals(Buffer.from(media))).toBe(true);
          expect(result.spooled!.size).toBe(media.length);
          expect(result.spooled!.textDigest).toBe(createHash('sha256').update(text).digest('base64url'));
          expect(result.spooled!.declaredType).toBe(dataUrl ? 'image/png' : undefined);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('decodes media of many slices the same, in chunks of any alignment, and skips the text digest when told', async () => {
    const media = Buffer.alloc(700 * 1024);
    for (let i = 0; i < media.length; i++) media[i] = (i * 7919) % 251;
    const text = media.toString('base64');
    const json = Buffer.from(JSON.stringify({ to: '1', base64: text }));
    for (const sizes of [[65_536], [100_003, 7], [1, 262_145, 2], [json.length]]) {
      const chunks: Buffer[] = [];
      for (let at = 0, k = 0; at < json.length; k++) chunks.push(json.subarray(at, (at += sizes[k % sizes.length])));
      const path = join(dir, `spool-${n++}`);
      const big = { media: 1 << 20, fields: 1024, total: 2 << 20 };
      const result = await readJsonMediaBody(
        (async function* () {
          yield* chunks;
        })(),
        big,
        path,
        tooLarge,
        undefined,
        { textDigest: sizes.length === 1 },
      );
      expect(readFileSync(path).equals(media)).toBe(true);
      expect(result.spooled!.textDigest).toBe(
        sizes.length === 1 ? createHash('sha256').update(text).digest('base64url') : '',
      );
    }
  });

  it('accepts escaped slashes, \\u escapes and whitespace inside the base64 text', async () => {
    const result = await read('{"base64":"aGV\\/\\u0062G8=\\n  ","to":"1"}', [3]);
    expect(result.bytes).toEqual(Buffer.from('aGV/bG8=', 'base64'));
    expect(result.body).toEqual({ to: '1' });
  });

  it('leaves JSON without base64 to JSON.parse', async () => {
    expect((await read('{"to":"1","url":"https://example.com/a.png"}')).body).toEqual({
      to: '1',
      url: 'https://example.com/a.png',
    });
    expect((await read('[{"base64":"AAAA"}]')).body).toEqual([{ base64: 'AAAA' }]);
  });

  it.each([
    ['{"base64":"not base64!"}', 400, 'invalid_request', '/base64'],
    ['{"base64":"AAAAA"}', 400, 'invalid_request', '/base64'],
    ['{"base64":"AA=A"}', 400, 'invalid_request', '/base64'],
    ['{"base64":"AA==="}', 400, 'invalid_request', '/base64'],
    ['{"base64":"data:image/png,AAAA"}', 400, 'invalid_request', '/base64'],
    ['{"base64":"AA\\"AA"}', 400, 'invalid_request', '/base64'],
    ['{"base64":""}', 400, 'invalid_request', '/base64'],
    ['{"base64":"AAAA","base64":"AAAA"}', 400, 'invalid_request', '/base64'],
    ['{"base64":"AAAA', 400, 'malformed_json', undefined],
    ['{"base64":"AA\\xAA"}', 400, 'malformed_json', undefined],
    ['{"base64":"AAAA" "to":"1"}', 400, 'malformed_json', undefined],
    ['{"to":1,}', 400, 'malformed_json', undefined],
    [`{"base64":"${'A'.repeat(8000)}"}`, 413, 'payload_too_large', undefined],
    [`{"caption":"${'x'.repeat(2000)}"}`, 413, 'payload_too_large', undefined],
    [`{"base64":"${' '.repeat(20_000)}"}`, 413, 'payload_too_large', undefined],
  ])('refuses bad body #%#', async (text, status, code, path) => {
    const answer = await refusal(text.slice(0, 20_000), [5, 64]);
    expect(answer.status).toBe(status);
    expect(answer.code).toBe(code);
    if (path) expect(answer.path).toBe(path);
  });

  it.each([
    ['a line break', 'image/png\\r\\nX-Injected: 1'],
    ['an escaped control character', 'image/png\\u0000'],
    ['no subtype', 'png'],
    ['more than 255 characters', `image/${'x'.repeat(300)}`],
  ])('refuses a data: URL whose type has %s, as the mimetype field would be', async (_what, type) => {
    const base64 = `data:${type};base64,AAAA`;
    expect(await refusal(`{"base64":"${base64}"}`, [5, 64])).toEqual({
      status: 400,
      code: 'invalid_request',
      path: '/base64',
    });
    expect(await refusal(`{"media":{"base64":"${base64}"}}`, [5, 64], ['media', 'base64'])).toEqual({
      status: 400,
      code: 'invalid_request',
      path: '/media/base64',
    });
  });

  it('keeps the type of a data: URL that is a media type', async () => {
    expect((await read('{"base64":"data:Image/PNG;name=a.png;base64,AAAA"}')).spooled!.declaredType).toBe('image/png');
  });

  it('decodes the base64 at a nested path (media.base64), and leaves a base64 anywhere else as a field', async () => {
    const at: Base64Path = ['media', 'base64'];
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 1, maxLength: 3000 }),
        fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 5 }),
        async (media, sizes) => {
          const json = JSON.stringify({
            base64: 'top',
            list: [{ media: { base64: 'in a list' } }],
            other: { base64: 'elsewhere', media: { base64: 'deeper' } },
            from: '4915100000003',
            media: { mimetype: 'image/jpeg', base64: Buffer.from(media).toString('base64'), filename: 'a.jpg' },
          });
          const result = await read(json, sizes, at);
          expect(result.body).toEqual({
            base64: 'top',
            list: [{ media: { base64: 'in a list' } }],
            other: { base64: 'elsewhere', media: { base64: 'deeper' } },
            from: '4915100000003',
            media: { mimetype: 'image/jpeg', filename: 'a.jpg' },
          });
          expect(result.bytes!.equals(Buffer.from(media))).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
    expect(await refusal('{"media":{"base64":"AAAAA"}}', [3], at)).toMatchObject({
      status: 400,
      path: '/media/base64',
    });
    expect(await refusal('{"media":{"base64":"AAAA","base64":"AAAA"}}', [3], at)).toMatchObject({
      status: 400,
      path: '/media/base64',
    });
    expect(await refusal(`{"media":{"base64":"${'QUFB'.repeat(3000)}"}}`, [64], at)).toMatchObject({ status: 413 });
  });

  it('decodes the same whatever the chunk boundaries: split at every position, and in runs of 1 to 9 bytes', async () => {
    // Plain runs longer than a quantum, escapes (\/, \n, \u), whitespace and padding, each cut at every byte.
    const media = Buffer.from(Array.from({ length: 200 }, (_, i) => (i * 37 + 11) % 256));
    const plain = media.toString('base64');
    const text = `${plain.slice(0, 50)}\\/ \\n${plain.slice(51, 97)}\\u0041\\u0041${plain.slice(99, 150).replaceAll('/', '\\/')}\\r\\t ${plain.slice(150)}`;
    const json = `{"to":"1","media":{"mimetype":"image/png","base64":"${text}","filename":"a.png"},"caption":"x"}`;
    const at: Base64Path = ['media', 'base64'];
    const value = (JSON.parse(json) as { media: { base64: string } }).media.base64;
    const expected = Buffer.from(value.replace(/\s/g, ''), 'base64');
    expect(expected.length).toBeGreaterThan(190);
    const check = async (result: Awaited<ReturnType<typeof read>>) => {
      expect(result.body).toEqual({ to: '1', media: { mimetype: 'image/png', filename: 'a.png' }, caption: 'x' });
      expect(result.bytes!.equals(expected)).toBe(true);
      expect(result.spooled!.textDigest).toBe(createHash('sha256').update(value).digest('base64url'));
    };
    for (let cut = 1; cut < json.length; cut++) await check(await read(json, [cut, json.length], at));
    for (let size = 1; size <= 9; size++) await check(await read(json, [size], at));
  });

  it('gives the answer an in-memory decoder gives, for any mix of base64, whitespace, escapes, padding and bad characters', async () => {
    // Each token: its JSON text, and the character it stands for (undefined: a raw control byte, malformed JSON).
    const tokens: Array<[string, string | undefined]> = [
      ['QUJD', 'QUJD'],
      ['A', 'A'],
      ['z', 'z'],
      ['+', '+'],
      ['/', '/'],
      ['=', '='],
      [' ', ' '],
      ['\\n', '\n'],
      ['\\/', '/'],
      ['\\u0041', 'A'],
      ['\\t', '\t'],
      ['!', '!'],
      ['-', '-'],
      ['\u00e9', '\u00e9'],
      ['\n', undefined],
      ['\t', undefined],
    ];
    /** What the whole text decodes to, or the first refusal met reading it from the start. */
    const reference = (picked: Array<[string, string | undefined]>) => {
      let padding = 0;
      let clean = '';
      for (const [, value] of picked) {
        if (value === undefined) return 'malformed_json';
        for (const c of value) {
          if (/\s/.test(c)) continue;
          if (c === '=') {
            if (++padding > 2) return 'invalid_request';
          } else if (/[A-Za-z0-9+/]/.test(c)) {
            if (padding > 0) return 'invalid_request';
          } else return 'invalid_request';
          clean += c;
        }
      }
      const bytes = Buffer.from(clean, 'base64');
      return bytes.length === 0 || clean.length % 4 === 1 ? 'invalid_request' : bytes;
    };
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...tokens), { minLength: 1, maxLength: 60 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }),
        async (picked, sizes) => {
          const json = `{"to":"1","base64":"${picked.map(([t]) => t).join('')}"}`;
          const expected = reference(picked);
          if (Buffer.isBuffer(expected)) {
            const result = await read(json, sizes);
            expect(result.bytes!.equals(expected)).toBe(true);
            expect(result.body).toEqual({ to: '1' });
          } else {
            expect((await refusal(json, sizes)).code).toBe(expected);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("relies on Node's base64 decoder skipping every byte outside the alphabet but - and _ (plain runs are checked by their decoded length)", () => {
    const alphabet = new Set(
      [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].map((c) => c.charCodeAt(0)),
    );
    const decodedAsData: string[] = [];
    for (let byte = 0; byte < 256; byte++) {
      if (alphabet.has(byte)) continue;
      for (let at = 0; at < 4; at++) {
        for (const around of ['', 'QUJD'.repeat(20)]) {
          const quantum = ['Q', 'U', 'J', 'D'];
          quantum[at] = String.fromCharCode(byte);
          const text = `${around}${quantum.join('')}${around}`;
          if ((Buffer.from(text, 'latin1').length / 4) * 3 === Buffer.from(text, 'base64').length)
            decodedAsData.push(String.fromCharCode(byte));
        }
      }
    }
    expect([...new Set(decodedAsData)].sort()).toEqual(['-', '_']);
  });

  it('never writes more than the limit to disk', async () => {
    const path = join(dir, 'limit');
    const big = `{"base64":"${'QUFB'.repeat(3000)}"}`;
    await expect(
      readJsonMediaBody(
        (async function* () {
          yield Buffer.from(big);
        })(),
        limits,
        path,
        tooLarge,
      ),
    ).rejects.toMatchObject({ status: 413 });
    expect(existsSync(path) ? readFileSync(path).length : 0).toBeLessThanOrEqual(limits.media + 64 * 1024);
  });
});
