/**
 * The projection runner (src/projections/projection-runner.ts) following the log keeps no batch it has applied: while
 * it waits for the next one, the events of the last (a whole history chunk, say) can be collected. A `for await`
 * loop over the store's subscription held them in the suspended frames of the loop and of the subscription's
 * generators until the next batch came, long enough to be moved to the old generation with every chunk.
 */
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type Database from 'better-sqlite3';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { Upcasters, UpcastingEventStore } from '../../src/eventstore/upcasting.js';
import type { Projection } from '../../src/projections/projection.js';
import { ProjectionRunner } from '../../src/projections/projection-runner.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp-dir.js';

setFlagsFromString('--expose_gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Remembers each event it applied by a weak reference only. */
class WeaklyRememberingProjection implements Projection {
  readonly name = 'weak';
  readonly version = 1;
  readonly handles = new Set(['Tick']);
  readonly seen: Array<WeakRef<StoredEvent>> = [];
  setup(_db: Database.Database) {}
  reset(_db: Database.Database) {}
  apply(event: StoredEvent) {
    this.seen.push(new WeakRef(event));
  }
}

/** Lets the current job end (a WeakRef's target is kept until then), then collects everything it can. */
async function collected(refs: ReadonlyArray<WeakRef<object>>): Promise<number> {
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  return refs.filter((ref) => ref.deref() !== undefined).length;
}

describe('projection runner: what it keeps between batches', () => {
  it('keeps no event of the batch it applied while it waits for the next', async () => {
    const dir = tempDir('dmg-retention-');
    const store = new UpcastingEventStore(new SqliteEventStore(join(dir, 'events.sqlite')), new Upcasters([]));
    const db = openReadModelDb(dir);
    const projection = new WeaklyRememberingProjection();
    const runner = new ProjectionRunner(store, db, [projection], pino({ level: 'silent' }));
    try {
      await runner.start();
      const events = Array.from({ length: 500 }, (_, i) => ({ type: 'Tick', data: { i, text: 'x'.repeat(200) } }));
      const { position } = await store.append('ticks', events);
      await runner.waitFor(position);
      expect(projection.seen).toHaveLength(500);
      // The runner may still be finishing the batch's turn (its checkpoint answered waitFor first): once it waits
      // for the next batch, nothing of this one is held.
      await eventually(
        async () => (await collected(projection.seen)) === 0,
        'every event of the applied batch collected',
      );
      // And it still follows.
      const next = await store.append('ticks', [{ type: 'Tick', data: { i: 500 } }]);
      await runner.waitFor(next.position);
      expect(projection.seen).toHaveLength(501);
    } finally {
      await runner.stop();
      db.close();
      await store.close();
    }
  });
});
