/**
 * PacingContexts' day of the link: found once and kept; a device not linked yet is not read again for a while, and
 * then only from where the last look ended (the drainer asks before every first try).
 */
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventStore } from '../../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { PacingContexts } from '../../../src/outbox/pacing/pacing-contexts.js';
import { DEFAULT_SETTINGS } from '../../../src/settings/settings-events.js';
import { sessionStream } from '../../../src/sessions/session-events.js';
import { tempDir } from '../../support/temp-dir.js';

describe('pacing contexts: the day of the link', () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  it('remembers a device not linked yet for a moment, then reads on from where it stopped', async () => {
    const dir = tempDir('dmg-pacing-');
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    const db = new Database(':memory:');
    cleanup = async () => {
      db.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    };
    const reads: number[] = [];
    const counted = new Proxy(store, {
      get: (target, key, receiver) => {
        if (key === 'readStream')
          return (streamId: string, options: { fromRevision?: number }) => {
            reads.push(options.fromRevision ?? 0);
            return target.readStream(streamId, options);
          };
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as EventStore;
    let now = Date.parse('2026-03-02T10:00:00Z');
    const contexts = new PacingContexts(counted, { recorded: () => DEFAULT_SETTINGS }, db, () => now);
    const state = (name: string) => ({ type: 'SessionStateChanged', data: { deviceId: 'd', state: name } });
    await store.append(sessionStream('d'), [state('connecting'), state('qr')]);

    expect(await contexts.linkedAt('d')).toBeUndefined();
    expect(await contexts.linkedAt('d')).toBeUndefined();
    expect(reads).toEqual([0]);

    await store.append(sessionStream('d'), [state('online')]);
    now += 5_000;
    expect(await contexts.linkedAt('d')).toEqual(expect.any(Number));
    // Read on from revision 2, the first it had not read.
    expect(reads).toEqual([0, 2]);
    await contexts.linkedAt('d');
    expect(reads).toEqual([0, 2]);
  });
});
