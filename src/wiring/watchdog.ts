/**
 * Wires the session watchdog (src/watchdog) into the gateway: online sessions that hear nothing while they send
 * (WATCHDOG_SILENCE, WATCHDOG_REBOOT), its reboot counter and the silent-sessions gauge.
 */
import { Counter } from 'prom-client';
import type { Logger } from 'pino';
import type { EventStore } from '../eventstore/event-store.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Clock } from '../time/clock.js';
import type { HealthReadModel } from '../watchdog/health-read-model.js';
import { Watchdog, type WatchdogDeps, type WatchdogSettings } from '../watchdog/watchdog.js';

export interface WatchdogWiring {
  store: EventStore;
  log: Logger;
  clock: Clock;
  settings: WatchdogSettings;
  sessions: WatchdogDeps['sessions'];
  health: HealthReadModel;
  metrics: Metrics;
  /** The log position the read models are at: the watchdog follows the log from there. */
  after: number;
}

/** Starts the watchdog following the log from `after`. */
export function startWatchdog(wiring: WatchdogWiring): Watchdog {
  const { metrics, health } = wiring;
  const reboots = new Counter({
    name: 'dmg_watchdog_reboots_total',
    help: 'Silent sessions the watchdog rebooted (WATCHDOG_REBOOT).',
    registers: [metrics.registry],
  });
  metrics.gauge(
    'dmg_sessions_silent',
    'Online sessions the watchdog found silent (they hear nothing while they send).',
    [],
    () => [{ labels: {}, value: health.silentCount() }],
    [{}],
  );
  const watchdog = new Watchdog({
    store: wiring.store,
    log: wiring.log,
    clock: wiring.clock,
    settings: wiring.settings,
    sessions: wiring.sessions,
    silentAtStart: () => health.silentDevices(),
    waitingAtStart: () => health.waitingDevices(),
    onReboot: () => reboots.inc(),
  });
  watchdog.start(wiring.after);
  return watchdog;
}
