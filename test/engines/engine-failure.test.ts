import { describe, expect, it } from 'vitest';
import { domainErrorOfEngine, engineSupports, translatingEngineFailures } from '../../src/engines/engine-failure.js';
import { EngineError } from '../../src/engines/engine.js';
import { DomainError, sessionNotOnline } from '../../src/errors/domain-error.js';

describe('engine failures in the words of the API', () => {
  it('says the state the session is in, and never "online, not online"', () => {
    expect(sessionNotOnline('closed').message).toBe('the session is closed, not online');
    const online = sessionNotOnline('online');
    expect(online.code).toBe('session_not_online');
    expect(online.message).not.toContain('not online');
    expect(online.retryAfterSeconds).toBe(1);
    expect(sessionNotOnline(undefined).message).toBe('the session is not online');
  });

  it('maps not_connected to the session state, named codes to their domain codes, the rest to engine_error', () => {
    const notConnected = domainErrorOfEngine(new EngineError('not_connected', 'gone'), 'reconnecting');
    expect(notConnected).toMatchObject({
      code: 'session_not_online',
      message: 'the session is reconnecting, not online',
    });
    const named = domainErrorOfEngine(new EngineError('group_not_found', 'no such group'), 'online', {
      group_not_found: 'not_found',
    });
    expect(named).toMatchObject({ code: 'not_found', message: 'no such group' });
    expect(domainErrorOfEngine(new EngineError('boom', 'it broke'), 'online')).toMatchObject({
      code: 'engine_error',
      message: 'the network refused: it broke',
    });
    const other = new Error('not the engine');
    expect(domainErrorOfEngine(other, 'online')).toBe(other);
  });

  it('translates the rejections and throws of every method of the operations it wraps, and leaves results alone', async () => {
    const operations = {
      base: 2,
      async ok(x: number) {
        return this.base * x;
      },
      async refused(): Promise<void> {
        throw new EngineError('not_group_admin', 'not an admin');
      },
      sync(): number {
        throw new EngineError('not_connected', 'closed');
      },
    };
    const wrapped = translatingEngineFailures(operations, () => 'connecting', { not_group_admin: 'not_group_admin' });
    expect(await wrapped.ok(21)).toBe(42);
    await expect(wrapped.refused()).rejects.toMatchObject({ code: 'not_group_admin' });
    expect(() => wrapped.sync()).toThrow(DomainError);
    expect(() => wrapped.sync()).toThrow('the session is connecting, not online');
    expect(wrapped.base).toBe(2);
  });

  it('an optional operation the engine lacks is engine_error naming it; one it has is handed back', () => {
    const present = (n: number) => n + 1;
    expect(engineSupports(present, 'sums')(1)).toBe(2);
    const missing: ((n: number) => number) | undefined = undefined;
    expect(() => engineSupports(missing, 'group pictures')).toThrow(
      expect.objectContaining({ code: 'engine_error', message: "this device's engine has no group pictures" }),
    );
  });
});
