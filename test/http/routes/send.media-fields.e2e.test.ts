/**
 * Fields that the JSON schema bounds are held to the same rules when they come another way: a multipart file
 * part's file name (JSON `filename`: 1..255 characters; kept as a plain name) and a `data:` URL's type (JSON
 * `mimetype`: MIMETYPE_PATTERN, at most 255 characters).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxStream } from '../../../src/messages/message-events.js';
import { startTestGateway } from '../../support/gateway.js';
import { rawRequest } from '../../support/raw-http.js';
import { tempDir } from '../../support/temp-dir.js';

const TO = '4915112345678';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

describe('media fields that come outside the JSON fields', () => {
  let gw: Awaited<ReturnType<typeof startTestGateway>>;
  let key: string;
  const queuedCount = async () =>
    (await gw.store.readStream(outboxStream('shop'))).filter((e) => e.type === 'OutboxMessageQueued').length;
  const lastQueued = async () => {
    const events = await gw.store.readStream(outboxStream('shop'));
    return events.filter((e) => e.type === 'OutboxMessageQueued').at(-1)!.data as {
      content: { media: { filename?: string; mimetype: string } };
    };
  };
  const upload = (filename: string) =>
    rawRequest(
      gw.url,
      'POST',
      '/devices/shop/send/file',
      { 'x-device-key': key, 'content-type': 'multipart/form-data; boundary=B' },
      Buffer.from(
        `--B\r\nContent-Disposition: form-data; name="to"\r\n\r\n${TO}\r\n` +
          `--B\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--B--\r\n`,
      ),
    );
  const problemOf = (answer: { status: number; headers: Record<string, unknown>; text: string }) => ({
    status: answer.status,
    type: answer.headers['content-type'],
    errors:
      answer.status === 202
        ? undefined
        : (JSON.parse(answer.text) as { errors?: Array<{ path: string }> }).errors?.map((e) => e.path),
  });

  beforeAll(async () => {
    gw = await startTestGateway({ DATA_DIR: tempDir('dmg-media-fields-'), DEFAULT_ENGINE: 'sandbox' });
    key = (await gw.api('POST', '/devices', { admin: true, json: { id: 'shop', name: 'Shop' } })).body.deviceKey;
  });
  afterAll(() => gw.close());

  it.each([
    ['longer than 255 characters', 'a'.repeat(8000)],
    ['with a NUL', 'a\u0000b.txt'],
    ['with a control character', 'a\u001bb.txt'],
    ['that is a path, not a name', '../'],
  ])('refuses a multipart file name %s, as the JSON filename is, and queues nothing', async (_what, filename) => {
    const before = await queuedCount();
    const answer = await upload(filename);
    expect(problemOf(answer)).toEqual({ status: 400, type: 'application/problem+json', errors: ['/file'] });
    expect(await queuedCount()).toBe(before);
  });

  it('keeps only the last segment of a multipart file name that holds a path', async () => {
    const answer = await upload('../../etc/notes.txt');
    expect(answer.status, answer.text).toBe(202);
    expect((await lastQueued()).content.media.filename).toBe('notes.txt');
  });

  it('refuses a data: URL type that is no media type, as the JSON mimetype is', async () => {
    const json = await gw.api('POST', '/devices/shop/send/image', {
      deviceKey: key,
      json: { to: TO, mimetype: 'image/png\r\nX-Injected: 1', base64: PNG.toString('base64') },
    });
    expect(json.status).toBe(400);
    const before = await queuedCount();
    for (const type of ['image/png\r\nX-Injected: 1', `image/${'x'.repeat(300)}`, 'png']) {
      const answer = await gw.api('POST', '/devices/shop/send/image', {
        deviceKey: key,
        json: { to: TO, base64: `data:${type};base64,${PNG.toString('base64')}` },
      });
      expect({ status: answer.status, code: answer.body.code, errors: answer.body.errors }, type).toEqual({
        status: 400,
        code: 'invalid_request',
        errors: [{ path: '/base64', message: 'has a data URL type that is not a media type' }],
      });
    }
    expect(await queuedCount()).toBe(before);
    const fine = await gw.api('POST', '/devices/shop/send/image', {
      deviceKey: key,
      json: { to: TO, base64: `data:image/png;base64,${PNG.toString('base64')}` },
    });
    expect(fine.status).toBe(202);
    expect((await lastQueued()).content.media.mimetype).toBe('image/png');
  });
});
