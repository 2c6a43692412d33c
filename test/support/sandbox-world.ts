/**
 * A real gateway with sandbox devices online and a webhook receiver their hooks post to: the set-up of the
 * end-to-end tests of what devices do to each other (groups, channels, statuses, presence, history, labels).
 * `useSandboxWorld` starts it before the file's tests and closes it after them.
 */
import { afterAll, beforeAll } from 'vitest';
import { TestReceiver } from '../webhooks/support/receiver.js';
import { type Api, type ApiResponse, startTestGateway } from './gateway.js';
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
  /** The gateway and the receiver, once the file's tests run. */
  readonly gateway: Awaited<ReturnType<typeof startTestGateway>>;
  readonly receiver: TestReceiver;
  /** The online devices by id: their objects exist at once, their keys once the tests run. */
  readonly devices: Record<string, WorldDevice>;
  /** The gateway's API client. */
  api: Api;
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
}

export function useSandboxWorld(options: SandboxWorldOptions): SandboxWorld {
  let gateway: SandboxWorld['gateway'] | undefined;
  let receiver: TestReceiver | undefined;
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the sandbox world starts before the tests (beforeAll)');
    return value;
  };
  const devices: Record<string, WorldDevice> = {};
  for (const [id, phoneOf] of Object.entries(options.online))
    devices[id] =
      typeof phoneOf === 'string'
        ? { id, key: '', phone: phoneOf }
        : { id, key: '', phone: phoneOf.phone, ...(phoneOf.business ? { business: true } : {}) };
  const world: SandboxWorld = {
    get gateway() {
      return started(gateway);
    },
    get receiver() {
      return started(receiver);
    },
    devices,
    api: (method, path, requestOptions) => world.gateway.api(method, path, requestOptions),
    call: (device, method, path, json, headers) =>
      world.api(method, `/devices/${device.id}${path}`, {
        deviceKey: device.key,
        ...(json === undefined ? {} : { json }),
        ...(headers ? { headers } : {}),
      }),
    hooksOf: (device, event) =>
      world.receiver
        .of(device.id)
        .filter((r) => r.envelope.event === event)
        .map((r) => r.envelope.data),
  };

  beforeAll(async () => {
    gateway = await startTestGateway({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...options.env });
    receiver = await TestReceiver.start();
    for (const device of Object.values(devices)) {
      device.key = (await createSandboxDevice(gateway.api, device.id)).key;
      await bringOnline(gateway.api, device, device.phone, { business: device.business });
    }
    if (options.hookEvents)
      for (const id of options.hooked ?? Object.keys(devices)) {
        const hooked = await world.call(devices[id], 'PUT', '/hooks', {
          url: receiver.url,
          events: options.hookEvents,
        });
        if (hooked.status !== 200) throw new Error(`hook ${id}: ${hooked.status} ${JSON.stringify(hooked.body)}`);
      }
  });
  afterAll(async () => {
    await gateway?.close();
    await receiver?.close();
  });
  return world;
}
