import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { eventStoreConformance } from '../support/conformance.js';

eventStoreConformance('sqlite', {
  open: async () => new SqliteEventStore(join(mkdtempSync(join(tmpdir(), 'dmg-store-')), 'events.sqlite')),
});
