/**
 * A real gateway with sandbox devices online and a webhook receiver their hooks post to: the set-up of the
 * end-to-end tests of what devices do to each other (groups, channels, statuses, presence, history, labels).
 */
import { TestReceiver } from '../webhooks/support/receiver.js';
import { type ApiResponse, startTestGateway } from './gateway.js';
import { type TestDevice, bringOnline, createSandboxDevice } from './sessions.js';

export interface WorldDevice extends TestDevice {
  phone: string;
  /** Scanned by a WhatsApp Business phone (labels). */
  business?: boolean;
}

export interface SandboxWorldOptions {
  /** Settings of the gateway, over WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (the receiver is on 127.0.0.1). */
  env?: Record<string, string>;
  /** The devices brought online, by id, in this order: a phone number, or a phone and whether it is a business. */
  online: Record<string, string | { phone: string; business: boolean }>;
  /** The events every online device's hook subscribes to; no hooks when absent. */
  hookEvents?: string[];
  /** The devices that get the hook; all online ones when absent. */
  hooked?: string[];
}

export interface SandboxWorld {
  gateway: Awaited<ReturnType<typeof startTestGateway>>;
  receiver: TestReceiver;
  devices: Record<string, WorldDevice>;
  /** A request of one device: `/devices/:id<path>` with its key. */
  call(
    device: TestDevice,
    method: string,
    path: string,
    json?: unknown,
    headers?: Record<string, string>,
  ): Promise<ApiResponse>;
  /** The data of the webhooks of one event the device's hook received, in arrival order. */
  hooksOf(device: TestDevice, event: string): any[];
  close(): Promise<void>;
}

export async function startSandboxWorld(options: SandboxWorldOptions): Promise<SandboxWorld> {
  const gateway = await startTestGateway({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...options.env });
  const receiver = await TestReceiver.start();
  const close = async () => {
    await gateway.close();
    await receiver.close();
  };
  try {
    const devices: Record<string, WorldDevice> = {};
    for (const [id, phoneOf] of Object.entries(options.online)) {
      const { phone, business } = typeof phoneOf === 'string' ? { phone: phoneOf, business: false } : phoneOf;
      const device = { ...(await createSandboxDevice(gateway.api, id)), phone, ...(business ? { business } : {}) };
      await bringOnline(gateway.api, device, phone, { business });
      devices[id] = device;
    }
    if (options.hookEvents)
      for (const id of options.hooked ?? Object.keys(devices)) {
        const hooked = await gateway.api('PUT', `/devices/${id}/hooks`, {
          deviceKey: devices[id].key,
          json: { url: receiver.url, events: options.hookEvents },
        });
        if (hooked.status !== 200) throw new Error(`hook ${id}: ${hooked.status} ${JSON.stringify(hooked.body)}`);
      }
    return {
      gateway,
      receiver,
      devices,
      call: (device, method, path, json, headers) =>
        gateway.api(method, `/devices/${device.id}${path}`, {
          deviceKey: device.key,
          ...(json === undefined ? {} : { json }),
          ...(headers ? { headers } : {}),
        }),
      hooksOf: (device, event) =>
        receiver
          .of(device.id)
          .filter((r) => r.envelope.event === event)
          .map((r) => r.envelope.data),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
