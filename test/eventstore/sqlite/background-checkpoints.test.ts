import { existsSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openReadModelDb } from '../../../src/projections/read-model-db.js';
import { FALLBACK_AUTOCHECKPOINT_PAGES } from '../../../src/eventstore/sqlite/background-checkpoints.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { eventually } from '../../support/eventually.js';
import { tempDir } from '../../support/temp-dir.js';

const PAGE = 4096;

/** This process's open descriptors of the file (Linux: /proc/self/fd). */
const openDescriptorsOf = (file: string) =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false; // closed meanwhile (the listing's own descriptor)
    }
  });

describe('checkpoints on a thread of their own', () => {
  it('copy what the store committed into its file, well before the writer would, and leave no WAL after close', async () => {
    const file = join(tempDir('dmg-checkpoints-'), 'events.sqlite');
    const store = new SqliteEventStore(file);
    const before = statSync(file).size;
    await store.append(
      'probe-1',
      Array.from({ length: 2_000 }, (_, i) => ({ type: 'Probe', data: { i, pad: 'x'.repeat(300) } })),
    );
    // Far below the writer's own threshold: only the worker can have copied these pages into the file.
    expect(statSync(`${file}-wal`).size).toBeLessThan((FALLBACK_AUTOCHECKPOINT_PAGES * PAGE) / 10);
    await eventually(() => statSync(file).size > before + 500_000, 'the committed pages in the database file', 5_000);
    expect(await store.readStream('probe-1')).toHaveLength(2_000);
    await store.close();
    // The worker let go of the file first: the store's connection was the last, and took the WAL with it.
    expect(existsSync(`${file}-wal`)).toBe(false);
    const reopened = new SqliteEventStore(file);
    expect(await reopened.readStream('probe-1')).toHaveLength(2_000);
    await reopened.close();
  });

  it('keep one connection to a file two stores of the process opened, closed with the last of them', async () => {
    const file = join(tempDir('dmg-checkpoints-'), 'events.sqlite');
    const first = new SqliteEventStore(file);
    const second = new SqliteEventStore(file);
    // Kept alive past both closes: the worker thread stays, and with it any connection it failed to close.
    const third = new SqliteEventStore(join(tempDir('dmg-checkpoints-'), 'events.sqlite'));
    await first.append('probe-1', [{ type: 'Probe', data: {} }]);
    await first.close();
    await second.append('probe-1', [{ type: 'Probe', data: {} }]);
    await second.close();
    // No descriptor of the process names the file any more: the worker closed its one connection to it.
    expect(openDescriptorsOf(file)).toEqual([]);
    expect(existsSync(`${file}-wal`)).toBe(false);
    await third.close();
  });

  it('leave a file another process checkpoints (checkpointedElsewhere) without a connection of their own', async () => {
    const elsewhere = join(tempDir('dmg-checkpoints-'), 'events.sqlite');
    const here = join(tempDir('dmg-checkpoints-'), 'events.sqlite');
    const worker = new SqliteEventStore(elsewhere, { checkpointedElsewhere: true });
    await worker.append('probe-1', [{ type: 'Probe', data: {} }]);
    // The thread takes its files in order: once it holds the later one, it would hold the earlier one too.
    const primary = new SqliteEventStore(here);
    await eventually(() => openDescriptorsOf(here).length === 2, 'the thread connected to the other file', 5_000);
    expect(openDescriptorsOf(elsewhere)).toHaveLength(1);
    await primary.close();
    await worker.close();
  });

  it('copy what the read models committed into their file', async () => {
    const dir = tempDir('dmg-checkpoints-');
    const db = openReadModelDb(dir);
    db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT)');
    const file = join(dir, 'read-models.sqlite');
    const before = statSync(file).size;
    const insert = db.prepare('INSERT INTO rows (body) VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 2_000; i++) insert.run('y'.repeat(300));
    })();
    await eventually(() => statSync(file).size > before + 500_000, 'the committed pages in the database file', 5_000);
    db.close();
  });
});
