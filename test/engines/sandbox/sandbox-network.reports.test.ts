/**
 * The simulated network hands reports to devices and does not wait on what they make of them: a device that
 * cannot record a report (its actor stopping, the device deleted) rejects it, and that must never become an
 * unhandled rejection, which ends a Node process (it did for edits, revokes, presence and read receipts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineEvents } from '../../../src/engines/engine.js';
import { SandboxConnection } from '../../../src/engines/sandbox/sandbox-connection.js';
import type { SandboxCredentialStore } from '../../../src/engines/sandbox/sandbox-credentials.js';
import { SandboxNetwork } from '../../../src/engines/sandbox/sandbox-network.js';
import { eventually } from '../../support/eventually.js';

/** Reports refused so far: the test waits for every one, then for Node to have judged their rejections. */
let refused = 0;
const STOPPING = () => {
  refused += 1;
  return Promise.reject(new Error('the reports of device d can no longer be recorded'));
};

describe('sandbox network reports', () => {
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => unhandled.push(reason);
  afterEach(() => {
    process.off('unhandledRejection', record);
  });

  it('a device that refuses a report costs no unhandled rejection', async () => {
    process.on('unhandledRejection', record);
    const network = new SandboxNetwork({ deliveredDelayMs: 0, readDelayMs: 0 });
    // A device whose actor is stopping: every report it is handed is refused.
    const events = { activity: STOPPING, receipt: STOPPING, groups: STOPPING } as unknown as EngineEvents;
    const refusing = new SandboxConnection('d', events, network, {} as SandboxCredentialStore);
    const sender = new SandboxConnection('s', events, network, {} as SandboxCredentialStore);
    network.attach(refusing, '4915100000001');
    network.relay(sender, '4915100000001', '4915100000002', {
      kind: 'revoked',
      chatId: '4915100000002',
      from: '4915100000002',
      waMessageId: 'X',
      timestamp: 1,
    });
    network.presence(sender, '4915100000002', '4915100000001', 'typing');
    refusing.receipt({ waMessageId: 'X', status: 'read', recipient: '4915100000002', timestamp: 1 });
    refusing.groupReport({
      kind: 'participants',
      groupId: '120363000000000001@g.us',
      action: 'add',
      participants: [],
      by: '4915100000002',
    });
    // The revoke, the presence, the read receipt and the group change, each handed over on a timer of its own.
    await eventually(() => refused === 4, 'every report refused');
    // Node reports an unhandled rejection once the microtasks after the rejecting task have run.
    await new Promise((resolve) => setImmediate(resolve));
    await network.close();
    expect(unhandled).toEqual([]);
  });
});
