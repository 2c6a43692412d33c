/** Queries for test/storage/reader-threads.test.ts, run on its reader threads and on the main thread alike. */
import { threadId } from 'node:worker_threads';
import type Database from 'better-sqlite3';

export class Refused extends Error {
  override name = 'Refused';
}

export function testReads(db: Database.Database) {
  return {
    /** The thread that answered (0: the main thread). */
    where: () => threadId,
    rows: () => db.prepare('SELECT count(*) FROM t').pluck().get() as number,
    refuse: (why: string) => {
      throw new Refused(why);
    },
    /** Ends a reader thread while it answers (process.exit in a worker ends the thread); the main thread answers. */
    end: () => {
      if (threadId !== 0) process.exit(3);
      return 'main';
    },
  };
}
