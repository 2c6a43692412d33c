/**
 * Schema versions of the inbox's events (src/eventstore/upcasting.ts). MessageEdited and MessageRevoked of
 * version 2 always say whether this account made the change (`fromMe`); a version-1 event said so only when it
 * did, and one from before `fromMe` existed never did. Both read as written: an absent `fromMe` means the
 * author is unknown, and the message index decides from the rest of the event (src/chats/message-index.ts).
 */
import type { Upcaster } from '../eventstore/upcasting.js';

const asWritten = (type: string): Upcaster => ({ type, fromVersion: 1, upcast: (data: unknown) => data });

export const INBOX_UPCASTERS: readonly Upcaster[] = ['MessageEdited', 'MessageRevoked'].map(asWritten);
