/**
 * V8 settings of the gateway's process, set by src/main.ts before the gateway starts (V8 reads these as it runs,
 * so setting them then works as on the command line, which every way of starting the gateway would have to repeat).
 *
 * `--no-allocation-site-pretenuring`: V8 allocates an object literal's objects straight in the old generation once
 * most of them outlived a scavenge. The gateway's objects live for a request or one batch of the log, but a history
 * chunk's events (the store's records of them, their rows) outlive the scavenge that falls within their batch: their
 * literals were pretenured, and every later chunk's events were old-generation garbage until a full GC. A history import
 * of 100,000 messages grew the RSS by ~150 MB at its peak with pretenuring, ~75 MB without (docs/notes/performance.md).
 */
import { setFlagsFromString } from 'node:v8';

export const V8_FLAGS: readonly string[] = ['--no-allocation-site-pretenuring'];

export function applyV8Flags(set: (flags: string) => void = setFlagsFromString): void {
  for (const flag of V8_FLAGS) set(flag);
}
