/** A reader thread of the message index (src/storage/reader-threads.ts): its reads on a read-only connection. */
import { openReadModelReader } from '../projections/read-model-db.js';
import { serveReadQueries } from '../storage/reader-thread.js';
import { MessageIndexQueries } from './message-index-queries.js';
import { messageIndexReads } from './message-index-reads.js';

serveReadQueries((file) => messageIndexReads(new MessageIndexQueries(openReadModelReader(file))));
