/**
 * Events of a device's health stream (`health-<deviceId>`): what the session watchdog (watchdog.ts) judged of a
 * session that says `online`. Their data is the `session.health` webhook payload as it is.
 */
export const healthStream = (deviceId: string) => `health-${deviceId}`;

export const SESSION_HEALTHS = ['ok', 'silent'] as const;
export type SessionHealth = (typeof SESSION_HEALTHS)[number];

export interface SessionHealthChangedData {
  deviceId: string;
  health: SessionHealth;
  previousHealth: SessionHealth;
  /**
   * `silent`: nothing heard (no message, receipt, presence) for WATCHDOG_SILENCE while sends went out;
   * `heard`: something arrived again.
   */
  reason: 'silent' | 'heard';
  /** ISO 8601: since when nothing was heard while sends went out (with `silent`). */
  silentSince?: string;
  /** Whether the watchdog rebooted the session for this silence (WATCHDOG_REBOOT). */
  rebooting?: boolean;
}

export type HealthEvent = { type: 'SessionHealthChanged'; data: SessionHealthChangedData };

export const HEALTH_EVENT_TYPES: ReadonlySet<string> = new Set(['SessionHealthChanged']);
