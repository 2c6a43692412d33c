/** The read models' SQLite connection (src/projections/read-model-db.ts). */
import { describe, expect, it } from 'vitest';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { tempDir } from '../support/temp-dir.js';

describe('openReadModelDb', () => {
  it('reads through a memory map and bounds its page cache to 16 MiB (what it holds counts in the RSS)', () => {
    const db = openReadModelDb(tempDir());
    try {
      expect(db.pragma('cache_size', { simple: true })).toBe(-16_384);
      expect(db.pragma('mmap_size', { simple: true })).toBe(1024 ** 3);
    } finally {
      db.close();
    }
  });
});
