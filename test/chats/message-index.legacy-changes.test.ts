/**
 * Edits and revokes recorded before MessageEdited and MessageRevoked said who made them (`fromMe`, schema
 * version 2: src/inbox/inbox-upcasters.ts): the message index, rebuilt on upgrade, takes them on the
 * account's own messages as it did then, unless they come from the other party of a one-to-one chat; events
 * of version 2 are held to `fromMe`.
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MessageIndex } from '../../src/chats/message-index.js';
import { withCurrentSchemas } from '../../src/event-schemas.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { chatEventOf, inboxStream } from '../../src/inbox/inbox-events.js';
import { ProjectionRunner } from '../../src/projections/projection-runner.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { tempDir } from '../support/temp-dir.js';

const OWN = '4915100001110';
const PEER = '4915100004442';
const GROUP = '120363000000000001@g.us';
const at = 1_760_000_000;

const sentFromPhone = (waMessageId: string, chatId: string) => ({
  type: 'MessageReceived',
  data: {
    deviceId: 'd1',
    from: OWN,
    fromMe: true,
    chatId,
    isGroup: chatId === GROUP,
    type: 'text',
    body: 'hello',
    timestamp: at,
    waMessageId,
  },
});
/** As a gateway before `fromMe` wrote them: no schema version, no `fromMe`. */
const legacy = (type: 'MessageEdited' | 'MessageRevoked', waMessageId: string, chatId: string, from: string) => ({
  type,
  data: {
    deviceId: 'd1',
    chatId,
    from,
    waMessageId,
    timestamp: at + 1,
    ...(type === 'MessageEdited' ? { body: 'edited' } : {}),
  },
});

describe('edits and revokes recorded before they named their author', () => {
  it('change own messages as they did, except from the other party of a one-to-one chat', async () => {
    const dir = tempDir('dmg-legacy-changes-');
    const raw = new SqliteEventStore(join(dir, 'events.sqlite'));
    const store = withCurrentSchemas(raw);
    const inbox = inboxStream('d1');
    await raw.append(inbox, [
      sentFromPhone('EDITED', PEER),
      sentFromPhone('REVOKED', PEER),
      sentFromPhone('FORGED', PEER),
      sentFromPhone('IN_GROUP', GROUP),
      sentFromPhone('FORGED_NOW', PEER),
      legacy('MessageEdited', 'EDITED', PEER, OWN),
      legacy('MessageRevoked', 'REVOKED', PEER, OWN),
      legacy('MessageRevoked', 'FORGED', PEER, PEER),
      legacy('MessageRevoked', 'IN_GROUP', GROUP, OWN),
    ]);
    // Written today: says fromMe false, so the peer cannot revoke the account's message.
    await store.append(inbox, [
      chatEventOf('d1', { kind: 'revoked', chatId: PEER, from: PEER, waMessageId: 'FORGED_NOW', timestamp: at + 2 }),
    ]);
    const [written] = (await raw.readStream(inbox, { direction: 'backwards', maxCount: 1 })) as Array<{
      data: { fromMe?: boolean };
    }>;
    expect(written.data.fromMe).toBe(false);

    const db = openReadModelDb(dir);
    const index = new MessageIndex(db);
    const runner = new ProjectionRunner(store, db, [index], pino({ level: 'silent' }));
    await runner.start();
    const shown = (id: string) => {
      const message = index.message('d1', id)!;
      return { body: message.body, edited: message.edited, revoked: message.revoked };
    };
    expect(shown('EDITED')).toEqual({ body: 'edited', edited: true, revoked: false });
    expect(shown('REVOKED')).toMatchObject({ revoked: true });
    expect(shown('FORGED')).toEqual({ body: 'hello', edited: false, revoked: false });
    expect(shown('IN_GROUP')).toMatchObject({ revoked: true });
    expect(shown('FORGED_NOW')).toEqual({ body: 'hello', edited: false, revoked: false });
    await runner.stop();
    db.close();
    await raw.close();
  });
});
