/**
 * A real gateway whose Baileys engine talks to the fake socket (test/engines/baileys/support/fake-socket.ts),
 * with one Baileys device of a linked account (stored credentials, no QR) online: for the end-to-end tests of
 * what WhatsApp reports over that socket. `useFakeSocketGateway` starts it before the file's tests and closes
 * it after them.
 */
import { initAuthCreds } from 'baileys';
import { afterAll, beforeAll } from 'vitest';
import { AuthRecords } from '../../../../src/engines/baileys/auth/auth-records.js';
import { createBaileysEngine } from '../../../../src/engines/baileys/baileys-engine.js';
import { Engines, createEngines } from '../../../../src/engines/engines.js';
import { type ContactsGateway, startContactsGateway } from '../../../contacts/support/contacts-gateway.js';
import type { ApiResponse } from '../../../support/gateway.js';
import { eventually } from '../../../support/eventually.js';
import { ME } from './fake-socket-engine.js';
import { fakeSocketFactory } from './fake-socket.js';

export interface FakeSocketGateway {
  /** The gateway and the device's key, once the file's tests run. */
  readonly gateway: ContactsGateway;
  readonly key: string;
  readonly sockets: ReturnType<typeof fakeSocketFactory>;
  readonly deviceId: string;
  /** GET /devices/:deviceId<path> with the device's key. */
  get(path: string): Promise<ApiResponse>;
}

/** Starts the gateway, creates the Baileys device `deviceId` and links it (ME); the tests run once it is online. */
export function useFakeSocketGateway(deviceId: string): FakeSocketGateway {
  const sockets = fakeSocketFactory();
  let gateway: ContactsGateway | undefined;
  let key: string | undefined;
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the fake-socket gateway starts before the tests (beforeAll)');
    return value;
  };
  const world: FakeSocketGateway = {
    get gateway() {
      return started(gateway);
    },
    get key() {
      return started(key);
    },
    sockets,
    deviceId,
    get: (path) => world.gateway.api('GET', `/devices/${deviceId}${path}`, { deviceKey: world.key }),
  };

  beforeAll(async () => {
    gateway = await startContactsGateway({
      gateway: {
        engines: (dependencies) => {
          const { sandbox } = createEngines(dependencies);
          const baileys = createBaileysEngine({
            store: dependencies.store,
            logger: dependencies.log,
            makeSocket: sockets.factory,
            // Long enough that the watchdog stays out of these tests.
            keepAliveIntervalMs: 60_000,
          });
          return new Engines([sandbox, baileys], sandbox);
        },
      },
    });
    const created = await gateway.api('POST', '/devices', {
      admin: true,
      json: { id: deviceId, name: 'WhatsApp shop', engine: 'baileys' },
    });
    if (created.status !== 201)
      throw new Error(`create ${deviceId}: ${created.status} ${JSON.stringify(created.body)}`);
    key = created.body.deviceKey as string;
    await new AuthRecords(gateway.store, deviceId, undefined).write('creds', {
      ...initAuthCreds(),
      me: { id: ME, name: 'Shop' },
    });
    const opened = await gateway.api('POST', `/devices/${deviceId}/session/open`, { deviceKey: key });
    if (opened.status !== 202) throw new Error(`open ${deviceId}: ${opened.status} ${JSON.stringify(opened.body)}`);
    await eventually(() => sockets.sockets.length > 0, 'a socket');
    sockets.latest().open();
    await eventually(async () => (await world.get('/session/state')).body.state === 'online', `${deviceId} online`);
  });
  afterAll(() => gateway?.close());
  return world;
}
