/**
 * A real gateway whose Baileys engine talks to the fake socket (test/engines/baileys/support/fake-socket.ts),
 * with one Baileys device of a linked account (stored credentials, no QR) online: for the end-to-end tests of
 * what WhatsApp reports over that socket.
 */
import { initAuthCreds } from 'baileys';
import { AuthRecords } from '../../../../src/engines/baileys/auth/auth-records.js';
import { createBaileysEngine } from '../../../../src/engines/baileys/baileys-engine.js';
import { Engines, createEngines } from '../../../../src/engines/engines.js';
import { type ContactsGateway, startContactsGateway } from '../../../contacts/support/contacts-gateway.js';
import type { ApiResponse } from '../../../support/gateway.js';
import { eventually } from '../../../support/eventually.js';
import { ME } from './fake-socket-engine.js';
import { fakeSocketFactory } from './fake-socket.js';

export interface FakeSocketGateway {
  gateway: ContactsGateway;
  sockets: ReturnType<typeof fakeSocketFactory>;
  deviceId: string;
  /** The device's key. */
  key: string;
  /** GET /devices/:deviceId<path> with the device's key. */
  get(path: string): Promise<ApiResponse>;
}

/** Starts the gateway, creates the Baileys device `deviceId`, links it (ME) and resolves once it is online. */
export async function startFakeSocketGateway(deviceId: string): Promise<FakeSocketGateway> {
  const sockets = fakeSocketFactory();
  const gateway = await startContactsGateway({
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
  try {
    const created = await gateway.api('POST', '/devices', {
      admin: true,
      json: { id: deviceId, name: 'WhatsApp shop', engine: 'baileys' },
    });
    if (created.status !== 201)
      throw new Error(`create ${deviceId}: ${created.status} ${JSON.stringify(created.body)}`);
    const key: string = created.body.deviceKey;
    const get = (path: string) => gateway.api('GET', `/devices/${deviceId}${path}`, { deviceKey: key });
    await new AuthRecords(gateway.store, deviceId, undefined).write('creds', {
      ...initAuthCreds(),
      me: { id: ME, name: 'Shop' },
    });
    const opened = await gateway.api('POST', `/devices/${deviceId}/session/open`, { deviceKey: key });
    if (opened.status !== 202) throw new Error(`open ${deviceId}: ${opened.status} ${JSON.stringify(opened.body)}`);
    await eventually(() => sockets.sockets.length > 0, 'a socket');
    sockets.latest().open();
    await eventually(async () => (await get('/session/state')).body.state === 'online', `${deviceId} online`);
    return { gateway, sockets, deviceId, key, get };
  } catch (error) {
    await gateway.close();
    throw error;
  }
}
