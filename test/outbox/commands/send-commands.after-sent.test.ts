/**
 * DELETE and PATCH /send/:waMessageId decide on what the outbox stream holds when they are asked (issue 36),
 * here with two writers of one stream, as with several processes: the one that sent the message and recorded
 * it `sent`, and the one the request reached, whose outbox and read models have not followed that yet.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { outboxStream } from '../../../src/messages/message-events.js';
import type { SeenMessages } from '../../../src/outbox/commands/seen-messages.js';
import { SendCommands } from '../../../src/outbox/commands/send-commands.js';
import type { OutboxReadModel } from '../../../src/outbox/read-models/outbox-read-model.js';
import { Outboxes } from '../../../src/outbox/stream/outboxes.js';
import { tempDir } from '../../support/temp-dir.js';
import { silent, text } from '../support/harness.js';

const DEVICE = 'shop-1';
const TO = '4915112345678';

describe('deleting or editing a message another writer has just recorded sent', () => {
  let store: SqliteEventStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  /**
   * The sending writer queues a message and starts sending it; the asking writer loads the outbox then (it
   * holds the message `sending`); then the sending writer records it `sent`. The asking writer's read models
   * show the message as it was until they are waited for up to the position of that `sent`.
   */
  async function sentElsewhere({ lagging = false }: { lagging?: boolean } = {}) {
    store = new SqliteEventStore(join(tempDir('dmg-outbox-'), 'events.sqlite'));
    const sending = new Outboxes(store, silent, undefined, true);
    const asking = new Outboxes(store, silent, undefined, true);
    const message = { outboxId: 'o-1', waMessageId: '3EB0AAAAAAAAAAAAAAAAAA', to: TO, content: text('hi') };
    const createdAt = new Date().toISOString();
    await sending.execute(DEVICE, { type: 'QueueMessage', deviceId: DEVICE, message: { ...message, createdAt } });
    await sending.execute(DEVICE, { type: 'StartSending', deviceId: DEVICE, outboxId: 'o-1', now: Date.now() });
    expect((await asking.get(DEVICE)).current.byWaMessageId(message.waMessageId)?.status).toBe('sending');
    const sentAt = Date.now();
    const { position: sentPosition } = await sending.execute(DEVICE, {
      type: 'RecordSent',
      deviceId: DEVICE,
      outboxId: 'o-1',
      now: sentAt,
    });

    let readModelsAt = 0;
    const statusNow = () => (readModelsAt >= sentPosition ? 'sent' : 'sending');
    const outboxView = {
      byWaMessageId: (_deviceId: string, waMessageId: string) =>
        waMessageId === message.waMessageId
          ? { outboxId: 'o-1', waMessageId, kind: 'text', to: TO, status: statusNow() }
          : undefined,
    } as unknown as OutboxReadModel;
    const seen: SeenMessages = {
      find: (_deviceId, waMessageId) =>
        waMessageId === message.waMessageId
          ? {
              waMessageId,
              chatId: TO,
              fromMe: true,
              from: '',
              type: 'text',
              body: 'hi',
              outboxId: 'o-1',
              content: message.content,
              status: statusNow(),
              ...(statusNow() === 'sent' ? { sentAt: Math.floor(sentAt / 1000) } : {}),
              revoked: false,
            }
          : undefined,
    };
    // Lagging: the read models do not get there within the wait (settle answers false, as the runner's does).
    const settle = (position: number) => {
      if (lagging) return Promise.resolve(false);
      readModelsAt = Math.max(readModelsAt, position);
      return Promise.resolve(true);
    };
    let n = 0;
    const commands = new SendCommands({
      outboxes: asking,
      projections: { waitFor: settle as never, settle },
      outboxView,
      idempotency: {} as never,
      intake: {} as never,
      media: {} as never,
      newWaMessageId: () => `3EB0EDIT${++n}`,
      seen,
    });
    return { commands, waMessageId: message.waMessageId };
  }

  it('revokes it (deleting), not 409 message_sending', async () => {
    const { commands, waMessageId } = await sentElsewhere();
    expect(await commands.delete(DEVICE, waMessageId)).toEqual({ status: 'deleting' });
    const requested = (await store!.readStream(outboxStream(DEVICE))).filter((e) => e.type === 'OutboxRevokeRequested');
    expect(requested.map((e) => e.data)).toEqual([{ deviceId: DEVICE, waMessageId, to: TO, outboxId: 'o-1' }]);
  });

  it('edits it (editing), not 409 not_editable', async () => {
    const { commands, waMessageId } = await sentElsewhere();
    expect(await commands.edit(DEVICE, waMessageId, 'hi again')).toEqual({ status: 'editing' });
    const queued = (await store!.readStream(outboxStream(DEVICE))).filter((e) => e.type === 'OutboxMessageQueued');
    expect(queued.at(-1)!.data).toMatchObject({
      to: TO,
      content: { kind: 'edit', messageId: waMessageId, text: 'hi again' },
    });
  });

  it('answers 503 busy, changing nothing, when the read models lag behind: their stale record does not decide', async () => {
    const { commands, waMessageId } = await sentElsewhere({ lagging: true });
    const lagging = { code: 'busy', reason: 'read_models_lagging', retryAfterSeconds: 5 };
    // Not 409 message_sending (the record the read models still show).
    await expect(commands.delete(DEVICE, waMessageId)).rejects.toMatchObject(lagging);
    await expect(commands.edit(DEVICE, waMessageId, 'hi again')).rejects.toMatchObject(lagging);
    const types = (await store!.readStream(outboxStream(DEVICE))).map((e) => e.type);
    expect(types.filter((type) => type === 'OutboxRevokeRequested' || type === 'OutboxMessageQueued')).toHaveLength(1);
  });
});
