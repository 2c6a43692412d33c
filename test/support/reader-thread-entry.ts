/** A reader thread's entry for test/storage/reader-threads.test.ts. */
import Database from 'better-sqlite3';
import { serveReadQueries } from '../../src/storage/reader-thread.js';
import { testReads } from './reader-thread-queries.js';

serveReadQueries((file) => testReads(new Database(file, { readonly: true, fileMustExist: true })));
