/**
 * The session watchdog: a session that says `online` but hears nothing is reported. It follows the log: a send
 * (`sent`) starts the wait, anything heard from the network (a message, a receipt, presence, a call, an edit, a
 * revoke, a vote) ends it. Once a session this process runs has waited WATCHDOG_SILENCE, on the injected clock,
 * its health stream records `silent` (GET /session/state `health`, a `session.health` event, the
 * dmg_sessions_silent gauge); with WATCHDOG_REBOOT it is rebooted, once per silence. The next thing heard
 * records `ok` again. Only devices waiting after a send are watched (and scanned each tick); which devices are
 * recorded silent is kept from the SessionHealthChanged events of the same log, not looked up per event heard.
 * Which devices wait, and which are silent, when it starts comes from the health read model (a restart forgets
 * no wait: it is counted again from the start).
 */
import type { Logger } from 'pino';
import { CommandHandler } from '../commands/command-handler.js';
import type { EventStore, StoredEvent } from '../eventstore/event-store.js';
import { followAll } from '../eventstore/follow-all.js';
import type { SessionStateName } from '../sessions/session-events.js';
import type { Clock, ClockTimer } from '../time/clock.js';
import { type HealthCommand, type HealthState, healthDecider } from './health-decider.js';
import { type HealthEvent, healthStream } from './health-events.js';
import { isHeard, isSendGoneOut } from './session-waits.js';

export interface WatchdogSettings {
  /** How long a session may hear nothing while it sends (ms). */
  silenceMs: number;
  /** Reboot a silent session (once per silence). */
  reboot: boolean;
}

export interface WatchdogDeps {
  store: EventStore;
  log: Logger;
  clock: Clock;
  settings: WatchdogSettings;
  /** The sessions this process runs: their state (undefined: not run here) and a reboot. */
  sessions: {
    state(deviceId: string): SessionStateName | undefined;
    reboot(deviceId: string): Promise<unknown>;
  };
  /** The devices recorded silent when the watchdog starts (the read model at the position it follows from). */
  silentAtStart: () => Iterable<string>;
  /**
   * The devices waiting to hear something after a send when the watchdog starts (the read model at the same
   * position): their wait goes on across a restart, counted from the start (the injected clock's now).
   */
  waitingAtStart?: () => Iterable<string>;
  onReboot?: (deviceId: string) => void;
}

/** How often silences are looked for, at most (the judgement is at most this late). */
const TICK_MS = 500;

interface Watch {
  /** Epoch ms (the clock's) of the first send nothing was heard after. */
  waitingSince: number | undefined;
  /** Reported silent (this process), and whether it rebooted the session for this silence. */
  silent: boolean;
  rebooted: boolean;
}

export class Watchdog {
  /** The devices waiting to hear something after a send (or reported silent by this process): what a tick scans. */
  private readonly watches = new Map<string, Watch>();
  /** The devices whose health stream says `silent`: something heard ends that silence. */
  private readonly silent = new Set<string>();
  private following: { stop(): Promise<void> } | undefined;
  private timer: ClockTimer | undefined;
  private readonly handler: CommandHandler<HealthState, HealthCommand, HealthEvent>;
  private checking = false;

  constructor(private readonly deps: WatchdogDeps) {
    this.handler = new CommandHandler({ store: deps.store, decider: healthDecider });
  }

  start(after: number): void {
    for (const deviceId of this.deps.silentAtStart()) this.silent.add(deviceId);
    const now = this.deps.clock.now();
    for (const deviceId of this.deps.waitingAtStart?.() ?? []) this.watch(deviceId).waitingSince = now;
    this.following = followAll(this.deps.store, {
      after,
      name: 'session watchdog',
      log: this.deps.log,
      onBatch: (batch) => this.observe(batch),
    });
    const tick = Math.max(1, Math.min(TICK_MS, this.deps.settings.silenceMs / 2));
    this.timer = this.deps.clock.setInterval(() => void this.check(), tick).unref();
  }

  async stop(): Promise<void> {
    this.deps.clock.clear(this.timer);
    await this.following?.stop();
  }

  /** Since when (the clock's epoch ms) the device waits to hear something after a send; undefined: it does not. */
  waitingSince(deviceId: string): number | undefined {
    return this.watches.get(deviceId)?.waitingSince;
  }

  /** How many devices are watched (those waiting after a send). */
  get watched(): number {
    return this.watches.size;
  }

  private watch(deviceId: string): Watch {
    let watch = this.watches.get(deviceId);
    if (!watch) {
      watch = { waitingSince: undefined, silent: false, rebooted: false };
      this.watches.set(deviceId, watch);
    }
    return watch;
  }

  private async observe(batch: readonly StoredEvent[]): Promise<void> {
    const now = this.deps.clock.now();
    for (const event of batch) {
      const data = event.data as { deviceId?: unknown; status?: string; state?: string };
      if (typeof data?.deviceId !== 'string') continue;
      const deviceId = data.deviceId;
      if (event.type === 'SessionHealthChanged') {
        if ((data as { health?: string }).health === 'silent') this.silent.add(deviceId);
        else this.silent.delete(deviceId);
        continue;
      }
      if (event.type === 'DeviceDeleted') {
        this.silent.delete(deviceId);
        this.watches.delete(deviceId);
        continue;
      }
      if (event.type === 'SessionStateChanged') {
        const watch = this.watches.get(deviceId);
        // Back online: the wait starts again (what was sent while offline could not be answered).
        if (watch?.waitingSince !== undefined && data.state === 'online') watch.waitingSince = now;
        continue;
      }
      if (isHeard(event)) {
        const wasSilent = this.watches.get(deviceId)?.silent === true;
        // Nothing to wait for any more: the device is no longer watched.
        this.watches.delete(deviceId);
        if (wasSilent || this.silent.has(deviceId)) {
          // Recorded once: the SessionHealthChanged that follows in the log says `ok`.
          this.silent.delete(deviceId);
          await this.report(deviceId, { type: 'ReportHeard', deviceId });
        }
        continue;
      }
      if (isSendGoneOut(event)) {
        const watch = this.watch(deviceId);
        watch.waitingSince ??= now;
      }
    }
  }

  /** Looks for sessions this process runs that have waited too long. */
  async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const now = this.deps.clock.now();
      const { silenceMs, reboot } = this.deps.settings;
      for (const [deviceId, watch] of this.watches) {
        if (watch.waitingSince === undefined || watch.silent) continue;
        if (now - watch.waitingSince < silenceMs) continue;
        if (this.deps.sessions.state(deviceId) !== 'online') continue;
        const rebooting = reboot && !watch.rebooted;
        watch.silent = true;
        const silentSince = new Date(watch.waitingSince).toISOString();
        this.deps.log.warn({ deviceId, silentSince, rebooting }, 'the session is online and hears nothing');
        await this.report(deviceId, { type: 'ReportSilent', deviceId, silentSince, rebooting });
        if (rebooting) {
          watch.rebooted = true;
          this.deps.onReboot?.(deviceId);
          await this.deps.sessions
            .reboot(deviceId)
            .catch((error: unknown) =>
              this.deps.log.warn({ err: error, deviceId }, 'the silent session was not rebooted'),
            );
        }
      }
    } finally {
      this.checking = false;
    }
  }

  private async report(deviceId: string, command: HealthCommand): Promise<void> {
    await this.handler
      .handle(healthStream(deviceId), command)
      .catch((error: unknown) => this.deps.log.warn({ err: error, deviceId }, 'the session health was not recorded'));
  }
}
