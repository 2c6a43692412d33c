import Database from 'better-sqlite3';
import { MessageIndex } from '../../../src/chats/message-index.js';

/** A message index on a new in-memory database, set up, empty and caught up (live from its first batch). */
export function emptyMessageIndex(): { db: Database.Database; index: MessageIndex } {
  const db = new Database(':memory:');
  const index = new MessageIndex(db);
  db.transaction(() => {
    index.setup(db);
    index.reset(db);
  })();
  index.caughtUp();
  return { db, index };
}
