/**
 * A read-model file written by an earlier version of the message index (1: one row per message, no chats;
 * 2: each status history as a JSON column of its message) is rebuilt from the log when the gateway's
 * runner meets it, to the same rows a current gateway wrote, and the same answers; one of version 9 (chats without
 * their views' JSON), or with JSON columns of other text, has its chats table made again, with no rebuild. The old files are made
 * from the current one with the exact tables of those versions (src/chats/message-index-projection.ts's history).
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAT_JSON_COLUMNS } from '../../src/chats/chat-list-json.js';
import { MessageIndex } from '../../src/chats/message-index.js';
import type { EventStore } from '../../src/eventstore/event-store.js';
import { ProjectionRunner } from '../../src/projections/projection-runner.js';
import { READ_MODEL_FILE, openReadModelDb } from '../../src/projections/read-model-db.js';
import { allProjections } from '../../src/read-models.js';
import { createDevice, goOnline } from '../outbox/support/sandbox-devices.js';
import { eventually } from '../support/eventually.js';
import { startTestGateway, tempDir } from '../support/gateway.js';
import { openTestStore } from '../support/test-store.js';

const ALICE = '4915100027772';
const BOB = '4915100028884';
const NOBODY = '4917700020000'; // sandbox: numbers ending in 0000 do not exist

/** The message table of version 2 (a status history as JSON in `history`). */
const V2_MESSAGES = `
  CREATE TABLE chat_messages (
    device_id TEXT NOT NULL, wa_message_id TEXT NOT NULL, chat_id TEXT NOT NULL, from_me INTEGER NOT NULL, sender TEXT NOT NULL,
    participant TEXT, type TEXT NOT NULL, body TEXT NOT NULL, at INTEGER NOT NULL, pos INTEGER PRIMARY KEY, outbox_id TEXT,
    content TEXT, status TEXT, sent_at INTEGER, read INTEGER NOT NULL DEFAULT 0, revoked INTEGER NOT NULL DEFAULT 0,
    edited INTEGER NOT NULL DEFAULT 0, media TEXT, media_stored_at INTEGER, received TEXT, poll TEXT, quoted TEXT, reactions TEXT, history TEXT
  );
  CREATE UNIQUE INDEX chat_messages_by_id ON chat_messages (device_id, wa_message_id);
  CREATE INDEX chat_messages_unread ON chat_messages (device_id, chat_id) WHERE from_me = 0 AND read = 0;
  CREATE INDEX chat_messages_media ON chat_messages (media_stored_at) WHERE media_stored_at IS NOT NULL;
  CREATE INDEX chat_messages_by_chat ON chat_messages (device_id, chat_id, at, pos) WHERE type <> 'reaction';`;
const V2_COLUMNS =
  'device_id, wa_message_id, chat_id, from_me, sender, participant, type, body, at, pos, outbox_id, content, status, sent_at, read, revoked, edited, media, media_stored_at, received, poll, quoted, reactions';

/** The message table of version 1 (no chats table then). */
const V1_MESSAGES = `
  CREATE TABLE chat_messages (
    device_id TEXT NOT NULL, wa_message_id TEXT NOT NULL, chat_id TEXT NOT NULL, from_me INTEGER NOT NULL, sender TEXT NOT NULL,
    participant TEXT, type TEXT NOT NULL, body TEXT NOT NULL, at INTEGER NOT NULL, outbox_id TEXT, content TEXT, status TEXT,
    sent_at INTEGER, read INTEGER NOT NULL DEFAULT 0, revoked INTEGER NOT NULL DEFAULT 0, media TEXT, media_stored_at INTEGER,
    received TEXT, poll TEXT, PRIMARY KEY (device_id, wa_message_id)
  ) WITHOUT ROWID;
  CREATE INDEX chat_messages_unread ON chat_messages (device_id, chat_id) WHERE from_me = 0 AND read = 0;
  CREATE INDEX chat_messages_media ON chat_messages (media_stored_at) WHERE media_stored_at IS NOT NULL;`;
const V1_COLUMNS =
  'device_id, wa_message_id, chat_id, from_me, sender, participant, type, body, at, outbox_id, content, status, sent_at, read, revoked, media, media_stored_at, received, poll';

/** The chats table of version 9 (no views' JSON), or with `json` columns (JSON columns of another text). */
const v9Chats = (json = '') => `
  CREATE TABLE chats (
    device_id TEXT NOT NULL, chat_id TEXT NOT NULL, name TEXT, last_wa_message_id TEXT NOT NULL, last_at INTEGER NOT NULL,
    last_pos INTEGER NOT NULL, unread INTEGER NOT NULL, archived INTEGER NOT NULL DEFAULT 0, pinned INTEGER NOT NULL DEFAULT 0,
    muted_until TEXT, marked_unread INTEGER NOT NULL DEFAULT 0, deleted INTEGER NOT NULL DEFAULT 0,
    cleared_at INTEGER NOT NULL DEFAULT 0, cleared_pos INTEGER NOT NULL DEFAULT 0, labels TEXT, ${json} PRIMARY KEY (device_id, chat_id)
  ) WITHOUT ROWID;
  CREATE INDEX chats_by_activity ON chats (device_id, last_at, last_pos);`;
const V9_CHAT_COLUMNS =
  'device_id, chat_id, name, last_wa_message_id, last_at, last_pos, unread, archived, pinned, muted_until, marked_unread, deleted, cleared_at, cleared_pos, labels';

const TABLES = ['chat_messages', 'chats', 'chat_message_statuses'];

describe('message index files of earlier versions', () => {
  let dir: string;
  let store: EventStore;
  const log = pino({ level: 'silent' });

  beforeAll(async () => {
    const gateway = await startTestGateway({
      DEFAULT_ENGINE: 'sandbox',
      OUTBOX_SPACING: '0ms',
      OUTBOX_RATE_PER_MINUTE: '100000',
      OUTBOX_MAX_ATTEMPTS: '1',
      SANDBOX_DELIVERED_DELAY_MS: '10',
      SANDBOX_READ_DELAY_MS: '20',
    });
    const { api } = gateway;
    try {
      const alice = await createDevice(api, 'alice', ALICE);
      const bob = await createDevice(api, 'bob', BOB);
      for (const device of [alice, bob]) await goOnline(api, device);
      const send = (from: typeof alice, kind: string, json: unknown) =>
        api('POST', `/devices/${from.id}/send/${kind}`, { deviceKey: from.key, json });
      const message = async (from: typeof alice, id: string) =>
        (await api('GET', `/devices/${from.id}/messages/${id}`, { deviceKey: from.key })).body;
      const first = (await send(alice, 'text', { to: BOB, text: 'lunch?' })).body.waMessageId as string;
      const failed = (await send(alice, 'text', { to: NOBODY, text: 'anyone?' })).body.waMessageId as string;
      await eventually(async () => ((await message(alice, first)).status === 'read' ? true : undefined), 'read');
      expect((await send(bob, 'reaction', { to: ALICE, messageId: first, emoji: '👍' })).status).toBe(202);
      expect((await send(bob, 'text', { to: ALICE, text: 'yes!', replyTo: first })).status).toBe(202);
      expect(
        (
          await api('PATCH', `/devices/${alice.id}/send/${first}`, {
            deviceKey: alice.key,
            json: { text: 'lunch at noon?' },
          })
        ).status,
      ).toBe(202);
      await eventually(async () => {
        const answer = await message(alice, first);
        return answer.edited && answer.reactions.length > 0 && (await message(alice, failed)).status === 'failed'
          ? true
          : undefined;
      }, 'the edit, the reaction and the failure');
      await eventually(
        async () =>
          (await api('GET', `/devices/${bob.id}/outbox`, { deviceKey: bob.key })).body.items.length === 0
            ? true
            : undefined,
        'drained',
      );
      // Late receipts: every message sent has its last status (read, or it failed).
      const live = openReadModelDb(gateway.dataDir);
      try {
        await eventually(
          () =>
            live
              .prepare("SELECT count(*) FROM chat_messages WHERE from_me = 1 AND status NOT IN ('read', 'failed')")
              .pluck()
              .get() === 0,
          'every status final',
        );
      } finally {
        live.close();
      }
    } finally {
      await gateway.close();
    }
    dir = gateway.dataDir;
    store = await openTestStore(dir);
  });
  afterAll(async () => {
    await store?.close();
  });

  const dump = (db: Database.Database) =>
    Object.fromEntries(
      TABLES.map((t) => [
        t,
        db
          .prepare(`SELECT * FROM ${t}`)
          .all()
          .map((row) => JSON.stringify(row))
          .sort(),
      ]),
    );
  /** Every message and chat as the routes show them. */
  const answers = (db: Database.Database) => {
    const index = new MessageIndex(db);
    const ids = db.prepare('SELECT device_id, wa_message_id, chat_id FROM chat_messages ORDER BY pos').all() as Array<{
      device_id: string;
      wa_message_id: string;
      chat_id: string;
    }>;
    return {
      messages: ids.map((m) => index.message(m.device_id, m.wa_message_id)),
      pages: ids.map((m) => index.messages(m.device_id, m.chat_id, { limit: 50 })),
      chats: [...new Set(ids.map((m) => m.device_id))].map((device) => index.chats(device, { limit: 50 })),
    };
  };
  /** A copy of the current read-model file, changed by `downgrade` into an older one. */
  const oldFile = (name: string, downgrade: (db: Database.Database) => void) => {
    const copy = tempDir(`dmg-${name}-`);
    copyFileSync(join(dir, READ_MODEL_FILE), join(copy, READ_MODEL_FILE));
    const db = openReadModelDb(copy);
    db.transaction(() => downgrade(db))();
    return db;
  };
  const upgrade = async (db: Database.Database) => {
    const runner = new ProjectionRunner(store, db, allProjections(db, store, log), log);
    await runner.start();
    await runner.stop();
  };
  const current = () => {
    const db = openReadModelDb(dir);
    try {
      return { tables: dump(db), answers: answers(db), version: checkpoint(db) };
    } finally {
      db.close();
    }
  };
  const checkpoint = (db: Database.Database) =>
    db.prepare("SELECT version, position FROM projection_checkpoints WHERE name = 'message-index'").get() as {
      version: number;
      position: number;
    };

  it('version 2 (status histories as JSON): rebuilt to the same rows, every statusHistory as it was', async () => {
    const expected = current();
    expect(expected.tables.chat_message_statuses.length).toBeGreaterThan(8);
    const histories = new Map<string, string>();
    const db = oldFile('v2', (db) => {
      const index = new MessageIndex(db);
      const rows = db
        .prepare('SELECT device_id, wa_message_id FROM chat_messages WHERE outbox_id IS NOT NULL')
        .all() as Array<{ device_id: string; wa_message_id: string }>;
      for (const row of rows)
        histories.set(
          `${row.device_id}/${row.wa_message_id}`,
          JSON.stringify(index.message(row.device_id, row.wa_message_id)!.statusHistory),
        );
      db.exec(`ALTER TABLE chat_messages RENAME TO current_messages; DROP INDEX chat_messages_by_id; DROP INDEX chat_messages_unread;
        DROP INDEX chat_messages_media; DROP INDEX chat_messages_by_chat; ${V2_MESSAGES}
        INSERT INTO chat_messages (${V2_COLUMNS}) SELECT ${V2_COLUMNS} FROM current_messages;
        DROP TABLE current_messages; DROP TABLE chat_message_statuses;
        UPDATE projection_checkpoints SET version = 2 WHERE name = 'message-index';`);
      const write = db.prepare('UPDATE chat_messages SET history = ? WHERE device_id = ? AND wa_message_id = ?');
      for (const [id, history] of histories) write.run(history, ...id.split('/'));
    });
    try {
      expect(histories.size).toBeGreaterThan(3);
      expect([...histories.values()].some((h) => h.includes('"edited"'))).toBe(true);
      expect([...histories.values()].some((h) => h.includes('recipient_not_found'))).toBe(true);
      await upgrade(db);
      expect(checkpoint(db)).toEqual(expected.version);
      expect(dump(db)).toEqual(expected.tables);
      expect(answers(db)).toEqual(expected.answers);
      const index = new MessageIndex(db);
      for (const [id, history] of histories) {
        const [device, waMessageId] = id.split('/') as [string, string];
        expect(index.message(device, waMessageId)!.statusHistory).toEqual(JSON.parse(history));
      }
    } finally {
      db.close();
    }
  });

  it('version 1 (no chats, no positions): rebuilt to the same rows', async () => {
    const expected = current();
    const db = oldFile('v1', (db) => {
      db.exec(`ALTER TABLE chat_messages RENAME TO current_messages; DROP INDEX chat_messages_by_id; DROP INDEX chat_messages_unread;
        DROP INDEX chat_messages_media; DROP INDEX chat_messages_by_chat; ${V1_MESSAGES}
        INSERT INTO chat_messages (${V1_COLUMNS}) SELECT ${V1_COLUMNS} FROM current_messages;
        DROP TABLE current_messages; DROP TABLE chat_message_statuses; DROP TABLE chats;
        UPDATE projection_checkpoints SET version = 1 WHERE name = 'message-index';`);
    });
    try {
      const before = db.prepare(`SELECT ${V1_COLUMNS} FROM chat_messages ORDER BY device_id, wa_message_id`).all();
      expect(before.length).toBeGreaterThan(4);
      await upgrade(db);
      expect(checkpoint(db)).toEqual(expected.version);
      expect(dump(db)).toEqual(expected.tables);
      expect(answers(db)).toEqual(expected.answers);
      expect(db.prepare(`SELECT ${V1_COLUMNS} FROM chat_messages ORDER BY device_id, wa_message_id`).all()).toEqual(
        before,
      );
    } finally {
      db.close();
    }
  });

  const OTHER_JSON = `json_head TEXT GENERATED ALWAYS AS ('{"chatId":' || json_quote(chat_id)) STORED,
    json_tail TEXT GENERATED ALWAYS AS ('}') STORED,`;
  it.each([
    ['without their JSON', ''],
    ['with JSON of another text', OTHER_JSON],
  ])('version 9 (chats %s): the table made again with its rows, nothing rebuilt', async (_, json) => {
    const expected = current();
    const db = oldFile('v9', (db) => {
      db.exec(`ALTER TABLE chats RENAME TO current_chats; DROP INDEX chats_by_activity; ${v9Chats(json)}
        INSERT INTO chats (${V9_CHAT_COLUMNS}) SELECT ${V9_CHAT_COLUMNS} FROM current_chats; DROP TABLE current_chats;`);
    });
    try {
      const messages = () => db.prepare('SELECT * FROM chat_messages ORDER BY pos').all();
      const before = messages();
      const made = () => db.prepare("SELECT sql FROM sqlite_master WHERE name = 'chats'").pluck().get() as string;
      expect(made()).not.toContain(CHAT_JSON_COLUMNS);
      // No rebuild: the message table's own rows are never written again (a rebuild empties it).
      db.exec('CREATE TEMP TRIGGER no_rebuild BEFORE DELETE ON chat_messages BEGIN SELECT RAISE(ABORT, 1); END');
      await upgrade(db);
      expect(made()).toContain(CHAT_JSON_COLUMNS);
      expect(checkpoint(db)).toEqual(expected.version);
      expect(dump(db)).toEqual(expected.tables);
      expect(messages()).toEqual(before);
      expect(answers(db)).toEqual(expected.answers);
      const index = new MessageIndex(db);
      for (const device of ['alice', 'bob']) {
        const { id } = db.prepare('SELECT id FROM devices WHERE name = ?').get(device) as { id: string };
        expect(JSON.parse(index.chatsJson(id, { limit: 50 }).items)).toEqual(index.chats(id, { limit: 50 }).items);
      }
    } finally {
      db.close();
    }
  });
});
