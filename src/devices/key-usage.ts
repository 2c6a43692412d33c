/**
 * When each scoped key was last used (`lastUsedAt`), noted on every authentication: kept in memory and written
 * together, in one transaction, every FLUSH_EVERY_MS (an unref'd timer), so authenticating never waits on a write.
 * A worker of GATEWAY_PROCESSES writes nothing: its `sink` hands the uses to the machine projector over the link
 * (src/projections/projector-link.ts), which notes them here in turn and writes them into the file it owns.
 */
import { type Clock, type ClockTimer, systemClock } from '../time/clock.js';

/** `lastUsedAt` is noted at most this often per key. */
export const KEY_USE_RESOLUTION_MS = 60_000;
/** How often the uses noted are written (or sent to the projector). */
export const FLUSH_EVERY_MS = 5_000;
const REMEMBERED = 10_000;

export type KeyUses = Array<[keyHash: string, at: number]>;

export class KeyUsage {
  /** Where the uses go at each flush: the key_usage table, or (a worker) the projector. Must not throw. */
  sink: (uses: KeyUses) => void;
  /** When each key's use was last noted (ms), by hash: a key used again within the resolution is not noted. */
  private readonly noted = new Map<string, number>();
  private unflushed = new Map<string, number>();
  private timer: ClockTimer | undefined;

  constructor(
    write: (uses: KeyUses) => void,
    private readonly clock: Clock = systemClock,
  ) {
    this.sink = write;
  }

  /** A use of a key, now (ms). */
  noteUse(keyHash: string, now: number): void {
    const noted = this.noted.get(keyHash);
    if (noted !== undefined && now - noted < KEY_USE_RESOLUTION_MS) return;
    if (this.noted.size >= REMEMBERED) this.noted.clear();
    this.noted.set(keyHash, now);
    this.keep(keyHash, now);
  }

  /** Uses noted elsewhere (a worker's, sent to the projector). */
  note(uses: KeyUses): void {
    for (const [keyHash, at] of uses) this.keep(keyHash, at);
  }

  /** A use noted here and not yet written (ms), so answers show it before the flush. */
  unwritten(keyHash: string): number | undefined {
    return this.unflushed.get(keyHash);
  }

  /** Writes (or sends) what was noted since the last flush. */
  flush(): void {
    if (this.unflushed.size === 0) return;
    const uses: KeyUses = [...this.unflushed];
    this.unflushed = new Map();
    try {
      this.sink(uses);
    } catch {
      // When a key was last used is worth no failure (a full disk, a closed channel): these uses are dropped.
    }
  }

  /** Stops the timer, writing what is left. */
  stop(): void {
    this.clock.clear(this.timer);
    this.timer = undefined;
    this.flush();
  }

  private keep(keyHash: string, at: number): void {
    if ((this.unflushed.get(keyHash) ?? 0) < at) this.unflushed.set(keyHash, at);
    this.timer ??= this.clock.setInterval(() => this.flush(), FLUSH_EVERY_MS).unref();
  }
}
