/**
 * GET /messages?q=: full-text search over texts, captions, file names and poll questions (SQLite FTS5, case and
 * accents folded), kept by the message index projection as messages arrive, are edited, revoked or deleted for
 * this account, and filled once at the end of a rebuild with the same answers. Real gateway, SQLite, HTTP.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectionRunner } from '../../src/projections/projection-runner.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { allProjections } from '../../src/read-models.js';
import { type SandboxDevice, createDevice, goOnline } from '../outbox/support/sandbox-devices.js';
import { eventually } from '../support/eventually.js';
import { type Api, startTestGateway } from '../support/gateway.js';

const ALICE = '4915100037772';
const BOB = '4915100038884';
const CAROL = '4915100039996';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('searching messages', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let alice: SandboxDevice;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox', OUTBOX_SPACING: '0ms' });
    api = gateway.api;
    alice = await createDevice(api, 'alice', ALICE);
    await goOnline(api, alice);
  });
  afterAll(async () => {
    await gateway.close();
  });

  const search = async (query: string) => {
    const answer = await api('GET', `/devices/${alice.id}/messages?${query}`, { deviceKey: alice.key });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body as { items: Array<{ waMessageId: string; body: string }>; nextCursor: string | null };
  };
  const found = async (q: string, extra = '') =>
    (await search(`q=${encodeURIComponent(q)}${extra}`)).items.map((m) => m.waMessageId);
  const inbound = async (name: string, json: Record<string, unknown>) => {
    const answer = await api('POST', `/sandbox/devices/${alice.id}/inbound`, { admin: true, json });
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    ids[name] = answer.body.waMessageId as string;
    await eventually(
      async () =>
        (await api('GET', `/devices/${alice.id}/messages/${ids[name]}`, { deviceKey: alice.key })).status === 200
          ? true
          : undefined,
      name,
    );
  };

  it('finds texts, captions, file names and poll questions, case and accents folded, words in any order', async () => {
    await inbound('cafe', { from: BOB, body: 'Meet me at the Café Müller tomorrow' });
    await inbound('photo', {
      from: BOB,
      type: 'image',
      body: 'the new storefront',
      media: { base64: PNG, mimetype: 'image/png', filename: 'storefront.png' },
    });
    await inbound('file', {
      from: CAROL,
      type: 'file',
      body: '',
      media: { base64: PNG, mimetype: 'application/pdf', filename: 'Invoice-2041.pdf' },
    });
    await inbound('poll', {
      from: CAROL,
      type: 'poll',
      poll: { question: 'Which café for lunch?', options: ['A', 'B'] },
    });
    await inbound('other', { from: CAROL, body: 'nothing to see here' });

    expect(await found('cafe')).toEqual([ids.poll, ids.cafe]);
    expect(await found('MULLER café')).toEqual([ids.cafe]);
    expect(await found('tomorrow meet')).toEqual([ids.cafe]);
    expect(await found('storefront')).toEqual([ids.photo]);
    expect(await found('invoice 2041')).toEqual([ids.file]);
    expect(await found('lunch')).toEqual([ids.poll]);
    // A word matches longer words it starts.
    expect(await found('invo')).toEqual([ids.file]);
    expect(await found('cafe', `&chatId=${BOB}`)).toEqual([ids.cafe]);
    expect(await search('q=zebra')).toEqual({ items: [], nextCursor: null });
    expect(await search('q=%22%2A%28')).toEqual({ items: [], nextCursor: null });
    const one = (await search('q=cafe')).items.find((m) => m.waMessageId === ids.cafe);
    expect(one).toMatchObject({ body: 'Meet me at the Café Müller tomorrow', chatId: BOB, fromMe: false });
  });

  it('pages newest first by cursor', async () => {
    const first = await search('q=cafe&limit=1');
    expect(first.items.map((m) => m.waMessageId)).toEqual([ids.poll]);
    const second = await search(`q=cafe&limit=1&cursor=${first.nextCursor}`);
    expect(second.items.map((m) => m.waMessageId)).toEqual([ids.cafe]);
    expect(second.nextCursor).toBeNull();
  });

  it('pages stay stable while messages arrive: a newer match shows on a fresh first page, an older one in its place', async () => {
    for (const n of [1, 2, 3, 4]) await inbound(`kiwi${n}`, { from: BOB, body: `kiwi number ${n}` });
    const first = await search('q=kiwi&limit=2');
    expect(first.items.map((m) => m.waMessageId)).toEqual([ids.kiwi4, ids.kiwi3]);
    // Between two pages: a new match, and history older than every one.
    await inbound('kiwi5', { from: BOB, body: 'kiwi number 5' });
    const old = await api('POST', `/sandbox/devices/${alice.id}/history`, {
      admin: true,
      json: {
        chats: [{ chatId: CAROL, messages: [{ waMessageId: 'KIWI0', body: 'kiwi of old', timestamp: 1_500_000_000 }] }],
      },
    });
    expect(old.status).toBe(202);
    await eventually(async () => ((await found('kiwi')).length === 6 ? true : undefined), 'both recorded');
    const rest: string[] = [];
    let cursor = first.nextCursor;
    while (cursor) {
      const next = await search(`q=kiwi&limit=2&cursor=${cursor}`);
      rest.push(...next.items.map((m) => m.waMessageId));
      cursor = next.nextCursor;
    }
    expect(rest).toEqual([ids.kiwi2, ids.kiwi1, 'KIWI0']);
    expect((await search('q=kiwi&limit=1')).items[0].waMessageId).toBe(ids.kiwi5);
  });

  it('follows edits, revokes and deletions for this account', async () => {
    await api('POST', `/sandbox/devices/${alice.id}/inbound`, {
      admin: true,
      json: { from: CAROL, type: 'edit', messageId: ids.other, body: 'a zebra after all' },
    });
    await eventually(async () => ((await found('zebra')).length === 1 ? true : undefined), 'the edit found');
    expect(await found('nothing')).toEqual([]);
    await api('POST', `/sandbox/devices/${alice.id}/inbound`, {
      admin: true,
      json: { from: CAROL, type: 'revoke', messageId: ids.other },
    });
    await eventually(async () => ((await found('zebra')).length === 0 ? true : undefined), 'the revoke out');
    expect(
      (await api('DELETE', `/devices/${alice.id}/messages/${ids.photo}?for=me`, { deviceKey: alice.key })).status,
    ).toBe(200);
    expect(await found('storefront')).toEqual([]);
  });

  it('bad input: q empty or longer than 200 characters, an unknown filter: 400', async () => {
    const status = async (query: string) =>
      (await api('GET', `/devices/${alice.id}/messages?${query}`, { deviceKey: alice.key })).status;
    expect(await status('q=')).toBe(400);
    expect(await status('')).toBe(400);
    expect(await status(`q=${'a'.repeat(201)}`)).toBe(400);
    expect(await status('q=cafe&chatId=nope')).toBe(400);
    expect(await status('q=cafe&sort=old')).toBe(400);
  });

  it('a rebuild fills the search index once at its end with the same answers', async () => {
    const queries = ['cafe', 'invoice', 'lunch', 'storefront', 'zebra', 'tomorrow', 'kiwi'];
    const before = await Promise.all(queries.map((q) => found(q)));
    const db = openReadModelDb(gateway.dataDir);
    const log = pino({ level: 'silent' });
    const runner = new ProjectionRunner(gateway.store, db, allProjections(db, gateway.store, log), log);
    await runner.rebuild();
    await runner.stop();
    const rows = db.prepare('SELECT count(*) AS n FROM chat_messages_search').get() as { n: number };
    // cafe, file, poll and six kiwis: the photo is deleted for this account, `other` revoked.
    expect(rows.n).toBe(9);
    db.close();
    expect(await Promise.all(queries.map((q) => found(q)))).toEqual(before);
  });
});
