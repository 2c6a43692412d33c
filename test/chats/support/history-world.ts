/**
 * The history tests' devices: Alice, whose hook gets every webhook, and another device, both online on the
 * sandbox of one real gateway (test/support/sandbox-world.ts).
 */
import { type SandboxWorld, useSandboxWorld } from '../../support/sandbox-world.js';

export function useHistoryWorld(phones: { alice: string; other: string }): SandboxWorld {
  return useSandboxWorld({
    env: { DEFAULT_ENGINE: 'sandbox' },
    online: phones,
    hookEvents: ['*'],
    hooked: ['alice'],
  });
}
