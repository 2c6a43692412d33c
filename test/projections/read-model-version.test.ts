import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ReadModelVersion } from '../../src/projections/read-model-version.js';
import { removeTempDir, tempDir } from '../support/temp-dir.js';

describe('the read models version', () => {
  const dir = tempDir();
  const path = join(dir, 'read-models.sqlite');
  const reader = new Database(path);
  reader.pragma('journal_mode = WAL');
  reader.exec('CREATE TABLE t (v INTEGER)');
  const writer = new Database(path);
  afterAll(() => {
    reader.close();
    writer.close();
    removeTempDir(dir);
  });

  it('moves with every commit, this connection’s own or another’s, and only then', () => {
    const version = new ReadModelVersion(reader);
    const before = version.current();
    expect(version.current()).toBe(before);
    reader.prepare('INSERT INTO t VALUES (1)').run();
    const own = version.current();
    expect(own).not.toBe(before);
    writer.prepare('INSERT INTO t VALUES (2)').run();
    expect(version.current()).not.toBe(own);
  });

  it('none while this connection holds a transaction open (what it reads may yet be rolled back)', () => {
    const version = new ReadModelVersion(reader);
    reader.exec('BEGIN');
    try {
      reader.prepare('INSERT INTO t VALUES (3)').run();
      expect(version.current()).toBeUndefined();
    } finally {
      reader.exec('ROLLBACK');
    }
    expect(version.current()).toBeDefined();
  });

  it('another connection’s numbers (another process, a restart) never give the same version', () => {
    expect(new ReadModelVersion(writer).current()).not.toBe(new ReadModelVersion(reader).current());
    expect(new ReadModelVersion(reader).current()).not.toBe(new ReadModelVersion(reader).current());
  });
});
