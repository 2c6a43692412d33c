/**
 * At a device's owner: something that needs the code the device shows (its QR code, or a pairing code), tried again
 * while the device is on its way to showing one, QR_WAIT_MS at most: being taken over here (devices are balanced as
 * processes join: its lease is held, its actor not loaded yet), connecting, or in that state without its code yet (a
 * resume, a code being renewed, another phone's pairing under way). Used by `GET /session/qr` (Supervisor.qr) and the
 * sandbox's scan and pairing (src/http/routes/sandbox-calls.ts), so that none answers "the session is qr" for want of
 * a code a moment away (issue 30).
 */
import type { SessionStateName } from '../sessions/session-events.js';
import { type Clock, sleep } from '../time/clock.js';
import type { Supervisor } from './supervisor.js';

const QR_WAIT_MS = 5_000;
const QR_POLL_MS = 50;

/**
 * The last outcome of `attempt`, with the device's state here and `moving` when this process has no actor for it at
 * the end (arriving, or handed on), so no state here says why nothing is on show.
 */
export async function untilShown<O>(
  sessions: Pick<Supervisor, 'state' | 'handover'>,
  clock: Clock,
  deviceId: string,
  shows: 'qr' | 'pairing',
  attempt: () => O | Promise<O>,
  shown: (outcome: O) => boolean,
): Promise<{ outcome: O; state?: SessionStateName; moving?: true }> {
  const deadline = clock.now() + QR_WAIT_MS;
  for (;;) {
    const outcome = await attempt();
    const handover = sessions.handover(deviceId);
    const state = sessions.state(deviceId);
    const onItsWay = handover === 'arriving' || state === 'connecting' || state === shows;
    if (!shown(outcome) && onItsWay && clock.now() < deadline) {
      await sleep(clock, QR_POLL_MS);
      continue;
    }
    return { outcome, ...(state ? { state } : {}), ...(handover ? { moving: true as const } : {}) };
  }
}
