/**
 * GET /contacts/:id/identity on the sandbox: a number that wrote to the device is known by both its
 * number and its LID (the sandbox pairs them as WhatsApp does), asked either way; an unknown contact is
 * two nulls; a malformed id is 400; a repeated pair records nothing; a rebuild gives the same rows.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contactsStream } from '../../src/contacts/contact-events.js';
import { lidOf } from '../../src/engines/sandbox/sandbox-numbers.js';
import { READ_MODEL_FILE } from '../../src/projections/read-model-db.js';
import { eventually } from '../support/eventually.js';
import { type TestDevice, bringOnline, createSandboxDevice } from '../support/sessions.js';
import { type ContactsGateway, startContactsGateway } from './support/contacts-gateway.js';

const ME = '4915100000001';
const ALICE = '4915112345678';
const STRANGER = '4915199999999';

function identityRows(dataDir: string): unknown[] {
  const db = new Database(join(dataDir, READ_MODEL_FILE), { readonly: true });
  try {
    return db.prepare('SELECT * FROM identities ORDER BY device_id, number').all();
  } finally {
    db.close();
  }
}

describe('contact identities (sandbox)', () => {
  let gateway: ContactsGateway;
  let device: TestDevice;

  beforeAll(async () => {
    gateway = await startContactsGateway();
    device = await createSandboxDevice(gateway.api, 'id-1');
    await bringOnline(gateway.api, device, ME);
  });
  afterAll(() => gateway?.close());

  const identity = (id: string) =>
    gateway.api('GET', `/devices/${device.id}/contacts/${encodeURIComponent(id)}/identity`, { deviceKey: device.key });
  const inbound = (from: string, body: string) =>
    gateway.api('POST', `/sandbox/devices/${device.id}/inbound`, { admin: true, json: { from, body } });

  it('knows both forms of a contact that wrote, asked by number or by LID', async () => {
    expect((await inbound(ALICE, 'hello')).status).toBe(202);
    const lid = lidOf(ALICE);
    expect(lid).toMatch(/^[0-9]{15}@lid$/);
    const byNumber = await eventually(async () => {
      const answer = await identity(ALICE);
      return answer.body.lid === null ? undefined : answer;
    }, 'the pair');
    expect(byNumber.status).toBe(200);
    expect(byNumber.body).toEqual({ number: ALICE, lid });
    expect((await identity(lid)).body).toEqual({ number: ALICE, lid });
  });

  it('records a pair once however often the contact writes', async () => {
    // POST /inbound answers once the message and its sender's pair were decided on and are durable.
    expect((await inbound(ALICE, 'again')).status).toBe(202);
    const events = await gateway.store.readStream(contactsStream(device.id));
    expect(events.filter((event) => event.type === 'IdentitiesLearned').map((event) => event.data)).toEqual([
      { deviceId: device.id, pairs: [{ number: ALICE, lid: lidOf(ALICE) }] },
    ]);
  });

  it('answers nulls for a contact it does not know, never a guess', async () => {
    for (const id of [STRANGER, lidOf(STRANGER), '123456789012345@lid']) {
      const answer = await identity(id);
      expect(answer.status, id).toBe(200);
      expect(answer.body, id).toEqual({ number: null, lid: null });
    }
  });

  it('refuses an id that is neither a number nor a LID with 400', async () => {
    for (const id of ['alice', '12@s.whatsapp.net', '@lid', '4915112345678@g.us']) {
      const answer = await identity(id);
      expect(answer.status, id).toBe(400);
    }
  });

  it('gives the same rows when rebuilt from position 0', async () => {
    const live = identityRows(gateway.dataDir);
    expect(live).toEqual([{ device_id: device.id, number: ALICE, lid: lidOf(ALICE) }]);
    await gateway.projections.rebuild();
    expect(identityRows(gateway.dataDir)).toEqual(live);
  });
});
