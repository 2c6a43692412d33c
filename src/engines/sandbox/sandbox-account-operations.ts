/**
 * A sandbox device's account operations (the engine port's AccountOperations) on the simulated network:
 * names and about texts per number (what a sandbox device sets is what every other one reads), and each
 * number's blocklist. A number nobody set an about for follows the sandbox's rule: null for an odd last
 * digit, else "Hey there! I am using the sandbox.".
 */
import type { AccountOperations } from '../engine.js';
import { avatarUrlOf, numberExists } from './sandbox-numbers.js';

export const SANDBOX_DEFAULT_ABOUT = 'Hey there! I am using the sandbox.';

export function defaultAboutOf(number: string): string | null {
  if (!numberExists(number)) return null;
  const last = Number(number[number.length - 1]);
  return Number.isInteger(last) && last % 2 === 0 ? SANDBOX_DEFAULT_ABOUT : null;
}

/** What the network keeps about numbers. */
export class SandboxProfiles {
  private readonly names = new Map<string, string>();
  private readonly abouts = new Map<string, string>();
  private readonly blocklists = new Map<string, Set<string>>();

  /** The profile name a number set (sent with its messages as `pushName`). */
  nameOf(phone: string): string | undefined {
    return this.names.get(phone);
  }

  operations(me: () => string): AccountOperations {
    return {
      profile: async () => {
        const phone = me();
        const name = this.names.get(phone);
        return { ...(name === undefined ? {} : { name }), about: this.aboutOf(phone), avatarUrl: avatarUrlOf(phone) };
      },
      setName: async (name) => void this.names.set(me(), name),
      setAbout: async (about) => void this.abouts.set(me(), about),
      about: async (number) => this.aboutOf(number),
      block: async (number) => {
        const phone = me();
        let blocked = this.blocklists.get(phone);
        if (!blocked) this.blocklists.set(phone, (blocked = new Set()));
        blocked.add(number);
      },
      unblock: async (number) => void this.blocklists.get(me())?.delete(number),
      blocked: async () => [...(this.blocklists.get(me()) ?? [])].sort(),
    };
  }

  aboutOf(number: string): string | null {
    const set = this.abouts.get(number);
    return set === undefined ? defaultAboutOf(number) : set === '' ? null : set;
  }

  /** Whether `number` blocks `other` (its messages and calls do not reach it). */
  isBlocking(number: string, other: string): boolean {
    return this.blocklists.get(number)?.has(other) === true;
  }
}
