/**
 * Stream tickets redeemed by any process (src/auth/stream-tickets.ts): two StreamTickets on one store, as two
 * processes of a gateway with the same admin key. A ticket issued by one is taken by the other, once; a ticket
 * signed with another key, altered, or expired is refused.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/auth/authenticator.js';
import { StreamTickets, TICKET_TTL_MS } from '../../src/auth/stream-tickets.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { tempDir } from '../support/temp-dir.js';

const ADMIN_KEY = 'admin-key-of-the-gateway';
const caller: Caller = {
  kind: 'device',
  deviceId: 'shop-1',
  keyHash: 'ab'.repeat(32),
  keyId: 'k_1',
  scopes: ['read'],
};
const opened: SqliteEventStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

function twoProcesses(now: () => number = Date.now) {
  const file = join(tempDir('dmg-tickets-'), 'events.sqlite');
  const stores = [new SqliteEventStore(file, { sharedFile: true }), new SqliteEventStore(file, { sharedFile: true })];
  opened.push(...stores);
  return stores.map((store) => new StreamTickets(store, ADMIN_KEY, now));
}

describe('stream tickets', () => {
  it('are redeemed by another process of the gateway, once', async () => {
    const [a, b] = twoProcesses();
    const { ticket } = a.issue(caller);
    expect(await b.redeem(ticket)).toEqual(caller);
    expect(await a.redeem(ticket)).toBeUndefined();
    expect(await b.redeem(ticket)).toBeUndefined();
  });

  it('a ticket used at the same time through two processes is taken by one', async () => {
    const [a, b] = twoProcesses();
    const { ticket } = a.issue({ kind: 'admin' });
    const taken = await Promise.all([a.redeem(ticket), b.redeem(ticket), a.redeem(ticket), b.redeem(ticket)]);
    expect(taken.filter((it) => it !== undefined)).toEqual([{ kind: 'admin' }]);
  });

  it('refuses a ticket signed with another key, an altered one and an expired one', async () => {
    let now = Date.now();
    const [a] = twoProcesses(() => now);
    const other = new StreamTickets(opened[0], 'another-gateway-key', () => now);
    expect(await a.redeem(other.issue(caller).ticket)).toBeUndefined();
    // The caller inside changed to the admin's, the signature kept.
    const { ticket } = a.issue(caller);
    const [payload, mac] = ticket.slice(3).split('.');
    const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forged = `st_${Buffer.from(JSON.stringify({ ...body, caller: { kind: 'admin' } })).toString('base64url')}.${mac}`;
    expect(await a.redeem(forged)).toBeUndefined();
    expect(await a.redeem('st_nothing')).toBeUndefined();
    // Expired: refused, and used up all the same.
    const late = a.issue(caller).ticket;
    now += TICKET_TTL_MS + 1;
    expect(await a.redeem(late)).toBeUndefined();
    expect(await a.redeem(ticket)).toBeUndefined();
  });
});
