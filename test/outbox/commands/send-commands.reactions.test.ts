/**
 * Queuing a reaction (src/outbox/commands/send-commands.ts): in a group, WhatsApp shows a reaction to the target's
 * author only when the reaction names them, so the author is looked up in the messages the device has seen
 * and recorded with the reaction; the outbox hands it to the engine as it is.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { OutboxEvent } from '../../../src/outbox/stream/outbox-events.js';
import type { OutboxReadModel } from '../../../src/outbox/read-models/outbox-read-model.js';
import type { QuotedMessage, SeenMessages } from '../../../src/outbox/commands/seen-messages.js';
import { SendCommands } from '../../../src/outbox/commands/send-commands.js';
import { eventually } from '../../support/eventually.js';
import { FakeConnection, type Harness, outboxHarness } from '../support/harness.js';

const DEVICE = 'shop-1';
const GROUP = '120363001234567890@g.us';
const MEMBER = '4915112345678';

describe('queuing a reaction', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  function commands(harness: Harness, seen: Record<string, QuotedMessage>): SendCommands {
    let n = 0;
    const seenMessages: SeenMessages = {
      find: () => undefined,
      quoted: (_deviceId, waMessageId) => seen[waMessageId],
    };
    return new SendCommands({
      outboxes: harness.outboxes,
      projections: { waitFor: async () => undefined, settle: async () => true },
      outboxView: { byWaMessageId: () => undefined } as unknown as OutboxReadModel,
      idempotency: {} as never,
      intake: {} as never,
      media: harness.media,
      newWaMessageId: () => `3EB0${++n}`,
      seen: seenMessages,
    });
  }

  const queuedContents = async (harness: Harness) =>
    (await harness.events(DEVICE)).flatMap((e: OutboxEvent) =>
      e.type === 'OutboxMessageQueued' ? [e.data.content] : [],
    );

  it('in a group, records who wrote the target: a member, or the account itself (a message sent from the phone)', async () => {
    h = await outboxHarness();
    const sends = commands(h, {
      G1: { chatId: GROUP, fromMe: false, from: MEMBER, type: 'text', body: 'hi all' },
      G2: { chatId: GROUP, fromMe: true, from: '', type: 'text', body: 'from my phone' },
      D1: { chatId: MEMBER, fromMe: false, from: MEMBER, type: 'text', body: 'direct' },
      ELSEWHERE: {
        chatId: '120363009999999999@g.us',
        fromMe: false,
        from: MEMBER,
        type: 'text',
        body: 'another group',
      },
    });
    await sends.send(DEVICE, { kind: 'reaction', to: GROUP, messageId: 'G1', emoji: '👍' });
    await sends.send(DEVICE, { kind: 'reaction', to: GROUP, messageId: 'G2', emoji: '👍' });
    await sends.send(DEVICE, { kind: 'reaction', to: MEMBER, messageId: 'D1', emoji: '👍' });
    await sends.send(DEVICE, { kind: 'reaction', to: GROUP, messageId: 'ELSEWHERE', emoji: '👍' });
    await sends.send(DEVICE, { kind: 'reaction', to: GROUP, messageId: 'UNSEEN', emoji: '👍' });
    expect(await queuedContents(h)).toEqual([
      { kind: 'reaction', messageId: 'G1', emoji: '👍', fromMe: false, sender: MEMBER },
      { kind: 'reaction', messageId: 'G2', emoji: '👍', fromMe: true },
      { kind: 'reaction', messageId: 'D1', emoji: '👍', fromMe: false },
      { kind: 'reaction', messageId: 'ELSEWHERE', emoji: '👍', fromMe: false },
      { kind: 'reaction', messageId: 'UNSEEN', emoji: '👍', fromMe: false },
    ]);
  });

  it('the engine gets the author with the reaction', async () => {
    h = await outboxHarness();
    await commands(h, { G1: { chatId: GROUP, fromMe: false, from: MEMBER, type: 'text', body: 'hi all' } }).send(
      DEVICE,
      { kind: 'reaction', to: GROUP, messageId: 'G1', emoji: '👍' },
    );
    const connection = new FakeConnection();
    h.connections.online(DEVICE, connection);
    h.drainer.start([DEVICE]);
    await eventually(() => connection.sent.length === 1, 'the reaction sent');
    expect(connection.sent[0]).toMatchObject({
      to: GROUP,
      content: { kind: 'reaction', messageId: 'G1', fromMe: false, sender: MEMBER },
    });
  });
});
