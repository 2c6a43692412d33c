import type { EventStore } from '../../src/eventstore/event-store.js';
import type { SessionStateChangedData } from '../../src/sessions/session-events.js';
import { sessionStream } from '../../src/sessions/session-events.js';
import { eventually } from './eventually.js';
import type { Api } from './gateway.js';

export interface TestDevice {
  id: string;
  key: string;
}

export async function createSandboxDevice(api: Api, id: string): Promise<TestDevice> {
  const created = await api('POST', '/devices', { admin: true, json: { id, name: id, engine: 'sandbox' } });
  if (created.status !== 201) throw new Error(`create ${id}: ${created.status} ${JSON.stringify(created.body)}`);
  return { id, key: created.body.deviceKey };
}

/** Waits until GET /session/state says `state`, and answers the body. */
export function waitForState(
  api: Api,
  device: TestDevice,
  state: string,
  timeoutMs?: number,
): Promise<{ state: string; phone?: string; since: string; lastError?: { code: string; message: string } }> {
  return eventually(
    async () => {
      const answer = await api('GET', `/devices/${device.id}/session/state`, { deviceKey: device.key });
      return answer.status === 200 && answer.body.state === state ? answer.body : undefined;
    },
    `${device.id} to be ${state}`,
    timeoutMs,
  );
}

/** open → qr → scan (by a WhatsApp Business phone when `business`) → online. */
export async function bringOnline(
  api: Api,
  device: TestDevice,
  phone: string,
  options: { business?: boolean } = {},
): Promise<void> {
  const opened = await api('POST', `/devices/${device.id}/session/open`, { deviceKey: device.key });
  if (opened.status !== 202 && opened.status !== 200) throw new Error(`open ${device.id}: ${opened.status}`);
  await waitForState(api, device, 'qr');
  const scanned = await api('POST', `/sandbox/devices/${device.id}/scan`, {
    admin: true,
    json: { phone, ...(options.business ? { business: true } : {}) },
  });
  if (scanned.status !== 202) throw new Error(`scan ${device.id}: ${scanned.status} ${JSON.stringify(scanned.body)}`);
  await waitForState(api, device, 'online');
}

export async function sessionChanges(store: EventStore, deviceId: string): Promise<SessionStateChangedData[]> {
  return (await store.readStream(sessionStream(deviceId))).map((event) => event.data as SessionStateChangedData);
}

/** The states the session went through, in order. */
export async function sessionStates(store: EventStore, deviceId: string): Promise<string[]> {
  return (await sessionChanges(store, deviceId)).map((change) => change.state);
}
