import type { EventStore } from '../../src/eventstore/event-store.js';
import { inboxStream } from '../../src/inbox/inbox-events.js';

/**
 * Appends `count` text messages received by `deviceId` (ids `IN_<n>`, bodies `message <n>`, from 500 numbers), 2,000
 * an append: a log long enough for a rebuild or a start to take a while (test/cli/rebuild.e2e.test.ts,
 * test/projections/start-catch-up.e2e.test.ts).
 */
export async function appendReceivedMessages(store: EventStore, deviceId: string, count: number): Promise<void> {
  for (let from = 0; from < count; from += 2_000)
    await store.append(
      inboxStream(deviceId),
      Array.from({ length: Math.min(2_000, count - from) }, (_, i) => ({
        type: 'MessageReceived',
        data: {
          deviceId,
          from: `4930${String((from + i) % 500).padStart(7, '0')}`,
          type: 'text',
          body: `message ${from + i}`,
          timestamp: 1_790_000_000 + from + i,
          waMessageId: `IN_${from + i}`,
        },
      })),
    );
}
