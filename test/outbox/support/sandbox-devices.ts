/**
 * Driving sandbox devices over HTTP: create, open and scan (the sandbox is the network), and reading
 * what the outbox and the recipients recorded.
 */
import type { EventStore } from '../../../src/eventstore/event-store.js';
import { outboxStream } from '../../../src/messages/message-events.js';
import { inboxStream } from '../../../src/inbox/inbox-events.js';
import type { Api } from '../../support/gateway.js';
import { eventually } from '../../support/eventually.js';

export interface SandboxDevice {
  id: string;
  key: string;
  phone: string;
  /** Scanned by a WhatsApp Business phone (labels). */
  business?: boolean;
}

export async function createDevice(
  api: Api,
  id: string,
  phone: string,
  options: { business?: boolean } = {},
): Promise<SandboxDevice> {
  const created = await api('POST', '/devices', { admin: true, json: { id, name: id, engine: 'sandbox' } });
  if (created.status !== 201) throw new Error(`create ${id}: ${created.status} ${JSON.stringify(created.body)}`);
  return { id, key: created.body.deviceKey, phone, ...(options.business ? { business: true } : {}) };
}

export const stateOf = async (api: Api, device: SandboxDevice): Promise<string> =>
  (await api('GET', `/devices/${device.id}/session/state`, { deviceKey: device.key })).body.state;

/** Opens the session; the first time, the sandbox phone scans the QR code. Resolves once online. */
export async function goOnline(api: Api, device: SandboxDevice): Promise<void> {
  const opened = await api('POST', `/devices/${device.id}/session/open`, { deviceKey: device.key });
  if (opened.status >= 300) throw new Error(`open ${device.id}: ${opened.status} ${JSON.stringify(opened.body)}`);
  const state = await eventually(async () => {
    const now = await stateOf(api, device);
    return now === 'qr' || now === 'online' ? now : undefined;
  }, `${device.id} qr or online`);
  if (state === 'qr') {
    const scanned = await api('POST', `/sandbox/devices/${device.id}/scan`, {
      admin: true,
      json: { phone: device.phone, ...(device.business ? { business: true } : {}) },
    });
    if (scanned.status >= 300) throw new Error(`scan ${device.id}: ${scanned.status} ${JSON.stringify(scanned.body)}`);
  }
  await eventually(async () => (await stateOf(api, device)) === 'online', `${device.id} online`);
}

export async function goOffline(api: Api, device: SandboxDevice): Promise<void> {
  const closed = await api('POST', `/devices/${device.id}/session/close`, { deviceKey: device.key, json: {} });
  if (closed.status >= 300) throw new Error(`close ${device.id}: ${closed.status} ${JSON.stringify(closed.body)}`);
}

export async function send(
  api: Api,
  device: SandboxDevice,
  to: string,
  text: string,
  headers: Record<string, string> = {},
) {
  const answer = await api('POST', `/devices/${device.id}/send/text`, {
    deviceKey: device.key,
    json: { to, text },
    headers,
  });
  if (answer.status !== 202) throw new Error(`send: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body as { outboxId: string; waMessageId: string; createdAt: string };
}

export async function outboxList(
  api: Api,
  device: SandboxDevice,
): Promise<Array<{ outboxId: string; waMessageId: string; status: string }>> {
  return (await api('GET', `/devices/${device.id}/outbox?limit=500`, { deviceKey: device.key })).body.items;
}

export async function statuses(store: EventStore, deviceId: string) {
  const events = await store.readStream(outboxStream(deviceId));
  return events.flatMap((e) =>
    e.type === 'MessageStatusChanged'
      ? [e.data as { waMessageId: string; status: string; outboxId?: string; error?: { code: string } }]
      : [],
  );
}

export async function received(store: EventStore, deviceId: string) {
  const events = await store.readStream(inboxStream(deviceId));
  return events.flatMap((e) =>
    e.type === 'MessageReceived' ? [e.data as { waMessageId: string; from: string; body: string }] : [],
  );
}
