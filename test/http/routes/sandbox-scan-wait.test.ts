/**
 * A sandbox scan of a device on its way to showing a QR code (connecting, or being taken over here) tries again
 * every 50 ms on the gateway's clock, 5 s at most (src/actors/until-shown.ts, as src/http/routes/sandbox-calls.ts
 * uses it): it scans the code as soon as one shows, and answers what it saw when none did by the deadline. Time is a
 * TestClock's, moved on by the test: no real wait, and "still waiting" holds for certain until time passes the deadline.
 */
import { describe, expect, it } from 'vitest';
import type { Supervisor } from '../../../src/actors/supervisor.js';
import { OwnerCalls } from '../../../src/cluster/owner-calls.js';
import type { SandboxEngine } from '../../../src/engines/sandbox/sandbox-engine.js';
import type { ReadModelProgress } from '../../../src/projections/projection-runner.js';
import { sandboxCalls } from '../../../src/http/routes/sandbox-calls.js';
import { TestClock } from '../../support/test-clock.js';

function scanning() {
  const clock = new TestClock();
  const device = { state: 'connecting', codeShown: false, scans: 0 };
  const sessions = {
    state: () => device.state,
    handover: () => undefined,
    settled: async () => ({ state: device.state, position: 0 }),
  } as unknown as Supervisor;
  const sandbox = {
    scan: async () => {
      device.scans++;
      if (!device.codeShown) return 'no_qr';
      device.state = 'online';
      return 'paired';
    },
  } as unknown as SandboxEngine;
  const projections: ReadModelProgress = { waitFor: async () => undefined, settle: async () => true };
  const calls = new OwnerCalls({ position: () => 0, settle: async () => true, recordedState: () => undefined });
  const { scan } = sandboxCalls({ sessions, sandbox, projections, calls, clock });
  let answer: Awaited<ReturnType<typeof scan>> | undefined;
  const answered = scan('d1', '4915112345678').then((a) => (answer = a));
  /** Until the scan waits on the clock (its first try is made after a turn of the event loop or two). */
  const waiting = async () => {
    for (let turns = 0; clock.pending().length === 0; turns++) {
      if (turns > 100) throw new Error('the scan never waited on the clock');
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { clock, device, answered, answer: () => answer, waiting };
}

describe('a sandbox scan waits for the code on the gateway clock', () => {
  it('answers what it saw when no code showed within 5 s, having tried every 50 ms', async () => {
    const { clock, device, answered, answer, waiting } = scanning();
    await waiting();
    await clock.advance(4_950);
    expect(answer()).toBeUndefined();
    expect(device.scans).toBe(100);
    await clock.advance(50);
    await answered;
    expect(answer()).toEqual({ outcome: 'no_qr', state: 'connecting' });
    expect(device.scans).toBe(101);
  });

  it('scans the code as soon as it shows', async () => {
    const { clock, device, answered, answer, waiting } = scanning();
    await waiting();
    await clock.advance(1_000);
    expect(answer()).toBeUndefined();
    device.state = 'qr';
    device.codeShown = true;
    await clock.advance(50);
    await answered;
    expect(answer()).toEqual({ outcome: 'paired', state: 'online' });
    expect(device.scans).toBe(22);
  });
});
