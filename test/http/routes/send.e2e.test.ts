/**
 * The send routes over HTTP against a real gateway whose device session stays closed: everything is
 * queued, answered 202 at once, and visible in the outbox right after the answer.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxStream } from '../../../src/messages/message-events.js';
import type { OutboxMessageQueuedData } from '../../../src/outbox/stream/outbox-events.js';
import { ADMIN_KEY, type Api, startTestGateway } from '../../support/gateway.js';
import { tempDir } from '../../support/temp-dir.js';
import { eventually } from '../../support/eventually.js';

const TO = '4915112345678';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
/** An ID3 tag and two MPEG audio frame headers, and an MP4 ftyp box: enough for type detection. */
const MP3_FRAME = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(413)]);
const MP3 = Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, 0]), MP3_FRAME, MP3_FRAME]);
const MP4 = Buffer.concat([
  Buffer.from([0, 0, 0, 0x18]),
  Buffer.from('ftypisom\x00\x00\x02\x00isomiso2', 'latin1'),
  Buffer.alloc(64),
]);
const IMAGE_LIMIT = 64 * 1024;
const FILE_LIMIT = 128 * 1024;

describe('sending over HTTP', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let key: string;
  let dataDir: string;
  const send = (kind: string, json: unknown, headers: Record<string, string> = {}) =>
    api('POST', `/devices/shop/send/${kind}`, { deviceKey: key, json, headers });
  const multipart = async (
    kind: string,
    fields: Record<string, string | string[]>,
    file?: { bytes: Buffer; name: string; type?: string },
  ) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) for (const part of [value].flat()) form.append(name, part);
    if (file) form.set('file', new Blob([file.bytes], file.type ? { type: file.type } : {}), file.name);
    const response = await fetch(`${gateway.url}/devices/shop/send/${kind}`, {
      method: 'POST',
      headers: { 'x-device-key': key },
      body: form,
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const queuedEvent = async (outboxId: string) => {
    const events = await gateway.store.readStream(outboxStream('shop'));
    return events.find(
      (e) => e.type === 'OutboxMessageQueued' && (e.data as OutboxMessageQueuedData).outboxId === outboxId,
    )!.data as OutboxMessageQueuedData;
  };
  const outboxIds = async () =>
    (await api('GET', '/devices/shop/outbox?limit=500', { deviceKey: key })).body.items.map(
      (i: { outboxId: string }) => i.outboxId,
    );

  beforeAll(async () => {
    dataDir = tempDir('dmg-send-');
    gateway = await startTestGateway({
      DATA_DIR: dataDir,
      DEFAULT_ENGINE: 'sandbox',
      MEDIA_MAX_BYTES: String(IMAGE_LIMIT),
      MEDIA_FILE_MAX_BYTES: String(FILE_LIMIT),
    });
    api = gateway.api;
    const created = await api('POST', '/devices', { admin: true, json: { id: 'shop', name: 'Shop' } });
    key = created.body.deviceKey;
  });
  afterAll(() => gateway.close());

  it('queues every kind (JSON), answers 202 at once with the waMessageId, and lists it in the outbox right away', async () => {
    const bodies: Array<[string, Record<string, unknown>]> = [
      ['text', { to: TO, text: 'hello' }],
      ['image', { to: TO, base64: PNG.toString('base64'), caption: 'a pixel' }],
      ['video', { to: TO, base64: MP4.toString('base64'), caption: 'a clip' }],
      ['audio', { to: TO, base64: MP3.toString('base64'), ptt: true }],
      ['file', { to: TO, base64: Buffer.from('plain text').toString('base64'), filename: 'notes.txt' }],
      ['location', { to: TO, latitude: 52.52, longitude: 13.405, name: 'Berlin', address: 'Mitte' }],
      ['link', { to: TO, url: 'https://example.com/a', text: 'look', preview: true }],
      ['reaction', { to: TO, messageId: '3EB0ABCDEF0123456789AB', emoji: '👍' }],
    ];
    for (const [kind, body] of bodies) {
      const answer = await send(kind, body);
      expect(answer.status, `${kind}: ${JSON.stringify(answer.body)}`).toBe(202);
      expect(answer.body).toEqual({
        outboxId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        waMessageId: expect.stringMatching(/^3EB0[0-9A-F]{18}$/),
        status: 'queued',
        kind,
        to: TO,
        createdAt: expect.any(String),
        // The session was never opened: the caller sees at once that the message waits.
        sessionState: 'closed',
      });
      expect(Date.parse(answer.body.createdAt)).not.toBeNaN();
      // Read your writes: the outbox shows it in the very next request.
      expect(await outboxIds()).toContain(answer.body.outboxId);
      const queued = await queuedEvent(answer.body.outboxId);
      expect(queued.waMessageId).toBe(answer.body.waMessageId);
      if (kind === 'image')
        expect(queued.content).toMatchObject({
          media: { source: 'stored', mimetype: 'image/png', size: PNG.length },
          caption: 'a pixel',
        });
      if (kind === 'video') expect(queued.content).toMatchObject({ media: { mimetype: 'video/mp4' } });
      if (kind === 'audio') expect(queued.content).toMatchObject({ media: { mimetype: 'audio/mpeg' }, ptt: true });
      if (kind === 'file')
        expect(queued.content).toMatchObject({
          media: { mimetype: 'application/octet-stream', filename: 'notes.txt' },
        });
      if (kind === 'link')
        expect(queued.content).toEqual({
          kind: 'link',
          url: 'https://example.com/a',
          text: 'look https://example.com/a',
          preview: true,
        });
      if (kind === 'reaction')
        expect(queued.content).toEqual({
          kind: 'reaction',
          messageId: '3EB0ABCDEF0123456789AB',
          emoji: '👍',
          fromMe: false,
        });
    }
  });

  it('accepts media as multipart/form-data with the other fields as parts', async () => {
    const image = await multipart('image', { to: TO, caption: 'from a form' }, { bytes: PNG, name: 'pixel.png' });
    expect(image.status, JSON.stringify(image.body)).toBe(202);
    expect((await queuedEvent(image.body.outboxId)).content).toMatchObject({
      kind: 'image',
      caption: 'from a form',
      media: { mimetype: 'image/png', size: PNG.length },
    });
    const audio = await multipart('audio', { to: TO, ptt: 'true' }, { bytes: MP3, name: 'voice.mp3' });
    expect(audio.status).toBe(202);
    expect((await queuedEvent(audio.body.outboxId)).content).toMatchObject({
      kind: 'audio',
      ptt: true,
      media: { mimetype: 'audio/mpeg' },
    });
    const video = await multipart('video', { to: TO }, { bytes: MP4, name: 'clip.mp4' });
    expect(video.status).toBe(202);
    // A file part's own name is the file name unless one is given.
    const file = await multipart(
      'file',
      { to: TO, caption: 'the report' },
      { bytes: Buffer.from('%PDF-1.4\n%âãÏÓ\n'), name: 'report.pdf' },
    );
    expect(file.status, JSON.stringify(file.body)).toBe(202);
    expect((await queuedEvent(file.body.outboxId)).content).toMatchObject({
      media: { filename: 'report.pdf', mimetype: 'application/pdf' },
      caption: 'the report',
    });
    const named = await multipart(
      'file',
      { to: TO, filename: 'renamed.pdf', mimetype: 'application/x-custom' },
      { bytes: Buffer.from('abc'), name: 'x.bin' },
    );
    expect((await queuedEvent(named.body.outboxId)).content).toMatchObject({
      media: { filename: 'renamed.pdf', mimetype: 'application/x-custom' },
    });
    // The bytes wait on disk (not in memory), under the data directory.
    const path = join(dataDir, 'media', 'shop', file.body.outboxId);
    expect(readFileSync(path).toString('latin1')).toContain('%PDF-1.4');
  });

  it('refuses a multipart body with two file parts and keeps neither on disk', async () => {
    const incoming = join(dataDir, 'media', '.incoming');
    const before = readdirSync(incoming).length;
    for (let i = 0; i < 3; i++) {
      const form = new FormData();
      form.append('to', TO);
      form.append('file', new Blob([Buffer.from('%PDF-1.4\n')]), 'a.pdf');
      form.append('file', new Blob([Buffer.alloc(100 * 1024, 2)]), 'b.bin');
      const response = await fetch(`${gateway.url}/devices/shop/send/file`, {
        method: 'POST',
        headers: { 'x-device-key': key },
        body: form,
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ detail: 'only one file part is allowed' });
    }
    expect(readdirSync(incoming)).toHaveLength(before);
  });

  it('takes mentions in a multipart body as repeated parts, a comma-separated part or a JSON array, and refuses bad items', async () => {
    const mentionsOf = async (mentions: string | string[]) => {
      const answer = await multipart(
        'image',
        { to: TO, caption: '@4915100000001 @4915100000002', mentions },
        { bytes: PNG, name: 'pixel.png' },
      );
      expect(answer.status, JSON.stringify(answer.body)).toBe(202);
      return (await queuedEvent(answer.body.outboxId)).mentions;
    };
    const both = ['4915100000001', '4915100000002'];
    expect(await mentionsOf(both)).toEqual(both);
    expect(await mentionsOf('4915100000001, 4915100000002')).toEqual(both);
    expect(await mentionsOf(JSON.stringify(both))).toEqual(both);
    expect(await mentionsOf('4915100000001')).toEqual(['4915100000001']);
    const bad = await multipart(
      'image',
      { to: TO, mentions: '4915100000001,not-a-number' },
      { bytes: PNG, name: 'pixel.png' },
    );
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('/mentions/1');
  });

  it('answers 400 for each kind of invalid request, naming the field', async () => {
    // [kind, body, the error's path (a missing property is reported on its parent, naming it)]
    const cases: Array<[string, unknown, string]> = [
      ['text', { to: '123', text: 'x' }, '/to'],
      ['text', { to: '015112345678', text: 'x' }, '/to'],
      ['text', { to: '+49 151 call me', text: 'x' }, '/to'],
      ['text', { to: '4915112345678@g.uss', text: 'x' }, '/to'],
      ['text', { to: TO }, '/:text'],
      ['text', { to: TO, text: '' }, '/text'],
      ['text', { to: TO, text: 'x'.repeat(65_537) }, '/text'],
      ['text', { to: TO, text: 'x', extra: 1 }, '/extra'],
      ['image', { to: TO }, '/'],
      ['image', { to: TO, url: 'https://example.com/a.png', base64: PNG.toString('base64') }, '/'],
      ['image', { to: TO, url: 'ftp://example.com/a.png' }, '/url'],
      ['image', { to: TO, base64: 'not base64!' }, '/base64'],
      ['image', { to: TO, base64: PNG.toString('base64'), mimetype: 'nonsense' }, '/mimetype'],
      ['audio', { to: TO, base64: MP3.toString('base64'), ptt: 'yes' }, '/ptt'],
      ['file', { to: TO, base64: 'aGVsbG8=' }, '/filename'],
      ['location', { to: TO, latitude: 91, longitude: 0 }, '/latitude'],
      ['location', { to: TO, latitude: 0, longitude: -180.5 }, '/longitude'],
      ['location', { to: TO, latitude: 0 }, '/:longitude'],
      ['link', { to: TO, url: 'javascript:alert(1)' }, '/url'],
      ['link', { to: TO }, '/:url'],
      ['reaction', { to: TO, messageId: '3EB0ABCDEF0123456789AB', emoji: 'ok' }, '/emoji'],
      ['reaction', { to: TO, messageId: '3EB0ABCDEF0123456789AB', emoji: '👍👍' }, '/emoji'],
      ['reaction', { to: TO, messageId: 'has spaces', emoji: '👍' }, '/messageId'],
    ];
    const before = (await outboxIds()).length;
    // Bodies refused after their base64 was spooled to a file (a bad mimetype, ptt or filename) leave no file behind.
    const incoming = join(dataDir, 'media', '.incoming');
    const spooled = readdirSync(incoming).length;
    for (const [kind, body, path] of cases) {
      const answer = await send(kind, body);
      expect(answer.status, `${kind} ${JSON.stringify(body).slice(0, 80)}`).toBe(400);
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
      expect(answer.body.code).toBe('invalid_request');
      const [where, missing] = path.split(':');
      const errors: Array<{ path: string; message: string }> = answer.body.errors;
      expect(
        errors.map((e) => e.path),
        `${kind} ${JSON.stringify(body).slice(0, 80)}`,
      ).toContain(where);
      if (missing) expect(errors.find((e) => e.path === where)!.message).toContain(missing);
    }
    expect(readdirSync(incoming)).toHaveLength(spooled);
    const proto = await api('POST', '/devices/shop/send/text', {
      deviceKey: key,
      raw: `{"to":"${TO}","text":"x","__proto__":{"a":1}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(proto.status).toBe(400);
    const malformed = await api('POST', '/devices/shop/send/image', {
      deviceKey: key,
      raw: '{"to":',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.body.code).toBe('malformed_json');
    const notJson = await api('POST', '/devices/shop/send/text', {
      deviceKey: key,
      raw: 'to=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(notJson.status).toBe(415);
    const formForText = await multipart('location', { to: TO, latitude: '1', longitude: '2' });
    expect(formForText.status).toBe(415);
    const twoSources = await multipart(
      'image',
      { to: TO, url: 'https://example.com/a.png' },
      { bytes: PNG, name: 'a.png' },
    );
    expect(twoSources.status).toBe(400);
    const unknownField = await multipart('image', { to: TO, colour: 'red' }, { bytes: PNG, name: 'a.png' });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.errors[0].path).toBe('/colour');
    // Nothing was queued by any of them.
    expect((await outboxIds()).length).toBe(before);
  });

  it("takes an empty optional text (caption, a place's name or address) as none (they have no minimum length)", async () => {
    for (const [kind, body] of [
      ['image', { to: TO, base64: PNG.toString('base64'), caption: '' }],
      ['file', { to: TO, base64: 'aGVsbG8=', filename: 'a.txt', caption: '' }],
      ['location', { to: TO, latitude: 1, longitude: 2, name: '', address: '' }],
    ] as const) {
      expect((await send(kind, body)).status, kind).toBe(202);
    }
  });

  it('reads numbers as people write them, and refuses a national number in words', async () => {
    const forms = [
      '+49 151 1234-5678',
      '+49 (151) 1234.5678',
      '0049 15112345678',
      '4915112345678@s.whatsapp.net',
      '4915112345678@c.us',
      '4915112345678:12@s.whatsapp.net',
    ];
    for (const to of forms) {
      const answer = await send('text', {
        to: to.replace('12345678', '12345678'),
        text: 'hi',
        mentions: ['+49 151 1234 5678'],
      });
      expect(answer.status, to).toBe(202);
      const queued = await queuedEvent(answer.body.outboxId);
      expect(queued.to, to).toBe('4915112345678');
      expect(queued.mentions, to).toEqual(['4915112345678']);
    }
    const group = await send('text', { to: '120363000000000001@G.US', text: 'hi all' });
    expect(group.status).toBe(202);
    expect((await queuedEvent(group.body.outboxId)).to).toBe('120363000000000001@g.us');
    const form = await multipart('image', { to: '+49 151 12345678' }, { bytes: PNG, name: 'a.png' });
    expect(form.status).toBe(202);
    expect((await queuedEvent(form.body.outboxId)).to).toBe('4915112345678');

    const national = await send('text', { to: '0151 12345678', text: 'x' });
    expect(national.status).toBe(400);
    expect(national.body.detail).toContain('international format');
    expect(national.body.errors).toEqual([{ path: '/to', message: expect.stringContaining('country code') }]);
    const groupAsMention = await send('text', { to: TO, text: 'x', mentions: ['120363000000000001@g.us'] });
    expect(groupAsMention.status).toBe(400);
    expect(groupAsMention.body.errors[0].path).toBe('/mentions/0');
  });

  it('refuses media whose type does not fit the kind, or cannot be recognised (415)', async () => {
    const mismatch = await send('image', { to: TO, base64: MP3.toString('base64') });
    expect(mismatch.status).toBe(415);
    expect(mismatch.body.code).toBe('unsupported_media_type');
    const declared = await send('video', { to: TO, base64: MP4.toString('base64'), mimetype: 'image/png' });
    expect(declared.status).toBe(415);
    const unknown = await send('image', { to: TO, base64: Buffer.from('just some text').toString('base64') });
    expect(unknown.status).toBe(415);
    expect(unknown.body.detail).toContain('give mimetype');
    // With the type given, bytes that cannot be recognised are accepted as that type.
    const given = await send('image', {
      to: TO,
      base64: Buffer.from('raw bytes').toString('base64'),
      mimetype: 'image/webp',
    });
    expect(given.status).toBe(202);
  });

  it('enforces the media size limits, 413 over, for JSON and multipart alike', async () => {
    const justUnder = Buffer.alloc(IMAGE_LIMIT, 1);
    PNG.copy(justUnder);
    expect((await send('image', { to: TO, base64: justUnder.toString('base64') })).status).toBe(202);
    const over = Buffer.alloc(IMAGE_LIMIT + 1, 1);
    PNG.copy(over);
    const tooBig = await send('image', { to: TO, base64: over.toString('base64') });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.code).toBe('payload_too_large');
    const tooBigForm = await multipart('image', { to: TO }, { bytes: over, name: 'big.png' });
    expect(tooBigForm.status).toBe(413);
    // Files have their own, larger limit.
    expect((await send('file', { to: TO, base64: over.toString('base64'), filename: 'big.bin' })).status).toBe(202);
    expect((await multipart('file', { to: TO }, { bytes: Buffer.alloc(FILE_LIMIT, 2), name: 'max.bin' })).status).toBe(
      202,
    );
    expect(
      (await multipart('file', { to: TO }, { bytes: Buffer.alloc(FILE_LIMIT + 1, 2), name: 'over.bin' })).status,
    ).toBe(413);
    // A JSON body far over the limit is refused before it is read.
    const huge = await api('POST', '/devices/shop/send/image', {
      deviceKey: key,
      raw: JSON.stringify({ to: TO, base64: 'A'.repeat(4 * IMAGE_LIMIT) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(huge.status).toBe(413);
    // Other routes keep their 1 MiB JSON limit.
    const bigText = await api('POST', '/devices/shop/send/text', {
      deviceKey: key,
      raw: JSON.stringify({ to: TO, text: 'x'.repeat(1_100_000) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(bigText.status).toBe(413);
  });

  it('refuses a media URL that points to a private network (400), unless allowed', async () => {
    for (const url of [
      'http://127.0.0.1/a.png',
      'http://localhost:8080/a.png',
      'http://[::1]/a.png',
      'http://169.254.169.254/latest/meta-data',
      'http://10.1.2.3/a.png',
    ]) {
      const answer = await send('image', { to: TO, url });
      expect(answer.status, url).toBe(400);
      expect(answer.body.errors[0].path).toBe('/url');
    }
    const publicUrl = await send('image', { to: TO, url: 'https://example.com/a.png' });
    expect(publicUrl.status).toBe(202);
  });

  it('answers 202 whatever the session state, 404 for an unknown device (admin) and 401 without a key', async () => {
    expect((await api('GET', '/devices/shop/session/state', { deviceKey: key })).body.state).toBe('closed');
    expect((await api('POST', '/devices/nobody/send/text', { admin: true, json: { to: TO, text: 'x' } })).status).toBe(
      404,
    );
    expect((await api('POST', '/devices/shop/send/text', { json: { to: TO, text: 'x' } })).status).toBe(401);
    expect(
      (await api('POST', '/devices/shop/send/image', { json: { to: TO, url: 'https://example.com/a.png' } })).status,
    ).toBe(401);
    const viaAdmin = await api('POST', '/devices/shop/send/text', {
      headers: { 'x-admin-key': ADMIN_KEY },
      json: { to: TO, text: 'from the admin' },
    });
    expect(viaAdmin.status).toBe(202);
  });

  it('answers a repeated Idempotency-Key with the first answer, queuing once', async () => {
    const headers = { 'idempotency-key': 'order-4711' };
    const first = await send('text', { to: TO, text: 'only once' }, headers);
    const again = await send('text', { to: TO, text: 'only once' }, headers);
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    const racing = await Promise.all(
      Array.from({ length: 10 }, () => send('text', { to: TO, text: 'raced' }, { 'idempotency-key': 'race-1' })),
    );
    expect(new Set(racing.map((r) => r.body.outboxId)).size).toBe(1);
    const ids = await outboxIds();
    expect(ids.filter((id: string) => id === first.body.outboxId)).toHaveLength(1);
    expect(ids.filter((id: string) => id === racing[0].body.outboxId)).toHaveLength(1);
    // The same key with another request is refused; another key is another message.
    const reused = await send('text', { to: TO, text: 'something else' }, headers);
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe('idempotency_key_reused');
    expect(
      (await send('text', { to: TO, text: 'only once' }, { 'idempotency-key': 'order-4712' })).body.outboxId,
    ).not.toBe(first.body.outboxId);
    // Media too: the same upload under the same key is one message.
    const media = { to: TO, base64: PNG.toString('base64') };
    const m1 = await send('image', media, { 'idempotency-key': 'img-1' });
    const m2 = await send('image', media, { 'idempotency-key': 'img-1' });
    expect(m2.body).toEqual(m1.body);
    expect((await send('text', { to: TO, text: 'x' }, { 'idempotency-key': 'k'.repeat(256) })).status).toBe(400);
    expect((await send('text', { to: TO, text: 'x' }, { 'idempotency-key': 'k'.repeat(255) })).status).toBe(202);
  });

  it('a repeated Idempotency-Key that another process queued is answered once the read models here show that message', async () => {
    const created = await api('POST', '/devices', { admin: true, json: { id: 'elsewhere', name: 'Elsewhere' } });
    const headers = (k: string) => ({ 'idempotency-key': k });
    const sendThere = (k: string) =>
      api('POST', '/devices/elsewhere/send/text', {
        deviceKey: created.body.deviceKey,
        json: { to: TO, text: 'once' },
        headers: headers(k),
      });
    const first = await sendThere('there-1');
    const queued = (await gateway.store.readStream(outboxStream('elsewhere'))).find(
      (e) => e.type === 'OutboxMessageQueued',
    )!;
    const data = queued.data as OutboxMessageQueuedData;
    expect(data.outboxId).toBe(first.body.outboxId);
    // Another process queues the same request under a second key; this one has not folded it yet.
    await gateway.projections.stop();
    const theirs = {
      ...data,
      outboxId: randomUUID(),
      waMessageId: '3EB0ELSEWHERE000000002',
      seq: data.seq + 1,
      idempotency: { key: 'there-2', fingerprint: data.idempotency!.fingerprint },
    };
    await gateway.store.append(outboxStream('elsewhere'), [{ type: 'OutboxMessageQueued', data: theirs }], {
      expectedRevision: queued.revision,
    });
    let answered = false;
    const repeated = sendThere('there-2').finally(() => (answered = true));
    // It waits for the read models here to include that message (a waiter on the stopped runner), unanswered.
    const runner = gateway.projections as unknown as { waiters: unknown[] };
    await eventually(() => runner.waiters.length > 0, 'the send to wait for the read models');
    expect(answered).toBe(false);
    await gateway.projections.start();
    const answer = await repeated;
    expect(answer.status).toBe(202);
    expect(answer.body.outboxId).toBe(theirs.outboxId);
    expect(
      (await api('GET', `/devices/elsewhere/messages/${theirs.waMessageId}`, { deviceKey: created.body.deviceKey }))
        .status,
    ).toBe(200);
    const listed = (
      await api('GET', '/devices/elsewhere/outbox', { deviceKey: created.body.deviceKey })
    ).body.items.map((i: { outboxId: string }) => i.outboxId);
    expect(listed).toContain(theirs.outboxId);
  });

  it('keeps media on disk while queued and removes it when cancelled', async () => {
    const queued = await send('image', { to: TO, base64: PNG.toString('base64') });
    const path = join(dataDir, 'media', 'shop', queued.body.outboxId);
    expect(existsSync(path)).toBe(true);
    const cancelled = await api('DELETE', `/devices/shop/send/${queued.body.waMessageId}`, { deviceKey: key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({ status: 'cancelled' });
    expect(existsSync(path)).toBe(false);
  });
});
