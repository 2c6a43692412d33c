/** Which start failures src/start-failures.ts explains as a setting's (src/main.ts as started: test/main.e2e.test.ts). */
import { describe, expect, it } from 'vitest';
import { StoreRefusedError } from '../src/eventstore/event-store.js';
import { explainStartFailure } from '../src/start-failures.js';

describe('explainStartFailure', () => {
  it('anything else is not explained, and keeps its stack', () => {
    const config = { port: 3000, host: '127.0.0.1', dataDir: '/srv/gateway/data' };
    expect(explainStartFailure(new TypeError('x is undefined'), config)).toBeUndefined();
    expect(explainStartFailure('a string', config)).toBeUndefined();
    const elsewhere = Object.assign(new Error("EACCES: permission denied, open '/etc/ssl/key.pem'"), {
      code: 'EACCES',
      syscall: 'open',
      path: '/etc/ssl/key.pem',
    });
    expect(explainStartFailure(elsewhere, config)).toBeUndefined();
    const inside = Object.assign(new Error('EACCES'), {
      code: 'EACCES',
      syscall: 'open',
      path: '/srv/gateway/data/admin.key',
    });
    expect(explainStartFailure(inside, config)?.exitCode).toBe(78);
    // A folder whose name merely starts like the data directory's is not in it.
    const sibling = Object.assign(new Error('EACCES'), {
      code: 'EACCES',
      syscall: 'open',
      path: '/srv/gateway/data-old/x',
    });
    expect(explainStartFailure(sibling, config)).toBeUndefined();
  });

  it('an event store user without a right is a setting to fix (78), not a store to wait for', () => {
    const config = { port: 3000, host: '127.0.0.1', dataDir: '/srv/gateway/data' };
    const refused = new StoreRefusedError('access_denied', 'may not read $all');
    expect(explainStartFailure(refused, config)).toEqual({
      message: 'EVENTSTORE_URL: may not read $all',
      exitCode: 78,
    });
    expect(explainStartFailure(new StoreRefusedError('append_too_large', 'big'), config)).toBeUndefined();
  });
});
