/**
 * WhatsApp refusing the account itself (Connection Failure 402, 403 forbidden, 406: banned or locked) ends the
 * session as `failed` with `account_restricted`, and the gateway does not dial again with that account: it was
 * taken for a dropped connection (`reconnecting`, `connection_lost`) and redialled until the attempts ran out.
 */
import { describe, expect, it } from 'vitest';
import { testActor } from '../../actors/support/test-actor.js';
import { eventually } from '../../support/eventually.js';
import { useFakeSocketEngine } from './support/fake-socket-engine.js';

const h = useFakeSocketEngine();

describe('an account WhatsApp refuses', () => {
  it.each([402, 403, 406])(
    'Connection Failure %s: the session fails saying why, and is not dialled again',
    async (code) => {
      await h.linkedCreds('dev-1');
      const actor = testActor(
        h.engine,
        h.store,
        { baseDelayMs: 20, maxDelayMs: 20, jitter: 0, maxAttempts: 10 },
        { deviceId: 'dev-1' },
      );
      try {
        await actor.open();
        await eventually(() => (h.sockets.sockets.length === 1 ? true : undefined), 'socket made');
        h.sockets.latest().open();
        await eventually(() => (actor.state() === 'online' ? true : undefined), 'online');
        h.sockets.latest().closeWith(code, 'Connection Failure');
        await eventually(() => (actor.state() === 'failed' ? true : undefined), 'failed');
        const { lastError } = actor.sessionRecord();
        expect(lastError?.code).toBe('account_restricted');
        expect(lastError?.message).toMatch(
          /^WhatsApp refused this account \(.*\(\d{3}\): Connection Failure\): it may be banned or locked/,
        );
        expect(h.sockets.sockets).toHaveLength(1);
      } finally {
        await actor.stop();
      }
    },
  );
});
