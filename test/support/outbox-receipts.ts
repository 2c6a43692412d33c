/**
 * The receipt writer a message sink needs, as the gateway has it (receipts recorded through the outbox's
 * writer, src/outbox/commands/outbox-receipts.ts), for tests that build a sink, an actor or a supervisor
 * without the rest of the gateway. Without the outbox read model, a message the outbox no longer remembers
 * is taken as one it did not send.
 */
import { pino } from 'pino';
import type { EventStore } from '../../src/eventstore/event-store.js';
import { OutboxReceipts } from '../../src/outbox/commands/outbox-receipts.js';
import { Outboxes } from '../../src/outbox/stream/outboxes.js';

export function outboxReceipts(store: EventStore): OutboxReceipts {
  return new OutboxReceipts(new Outboxes(store, pino({ level: 'silent' })), { byWaMessageId: () => undefined });
}
