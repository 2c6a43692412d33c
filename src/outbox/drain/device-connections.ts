/**
 * What the outbox drainer needs from the device actors: the live engine connection of a device while
 * its session is online, and word of every change of session state. The supervisor of the device
 * actors provides it (wired in src/gateway.ts).
 */
import type { EngineConnection } from '../../engines/engine.js';
import type { SessionStateName } from '../../sessions/session-events.js';

export type SessionStateListener = (deviceId: string, state: SessionStateName) => void;

export interface DeviceConnections {
  /** The connection to send through, only while the device's session is `online` in this process. */
  connection(deviceId: string): EngineConnection | undefined;
  /** Every change of a device's session state; answers a function that stops listening. */
  onStateChange(listener: SessionStateListener): () => void;
}
