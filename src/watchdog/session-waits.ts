/**
 * When a session waits to hear from the network (docs/api-guide.md, "Deaf sessions"): a send gone out starts a
 * wait, anything heard ends it. The watchdog (watchdog.ts) follows these in the log; the health read model keeps
 * which devices wait, so that a restart forgets none.
 */
import type { StoredEvent } from '../eventstore/event-store.js';

/** Events that show the network still talks to the device. */
const HEARD: ReadonlySet<string> = new Set([
  'MessageReceived',
  'PresenceUpdated',
  'CallReceived',
  'MessageEdited',
  'MessageRevoked',
  'PollVoteReceived',
]);
const RECEIPTS: ReadonlySet<string> = new Set(['delivered', 'read', 'played']);

/** Whether the event shows the network talking to its device (it ends a wait). */
export const isHeard = (event: Pick<StoredEvent, 'type' | 'data'>): boolean =>
  HEARD.has(event.type) ||
  (event.type === 'MessageStatusChanged' && RECEIPTS.has((event.data as { status?: string } | null)?.status ?? ''));

/** Whether the event is a send gone out (it starts a wait, unless one runs already). */
export const isSendGoneOut = (event: Pick<StoredEvent, 'type' | 'data'>): boolean =>
  event.type === 'MessageStatusChanged' && (event.data as { status?: string } | null)?.status === 'sent';

/** The types isHeard and isSendGoneOut look at (the health read model handles them). */
export const WAIT_EVENT_TYPES: ReadonlySet<string> = new Set([...HEARD, 'MessageStatusChanged']);
