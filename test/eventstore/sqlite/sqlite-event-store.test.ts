import { join } from 'node:path';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { tempDir } from '../../support/temp-dir.js';
import { eventStoreConformance } from '../support/conformance.js';

eventStoreConformance('sqlite', {
  open: async () => new SqliteEventStore(join(tempDir('dmg-store-'), 'events.sqlite')),
});
