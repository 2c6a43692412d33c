/**
 * What makes two sends the same request for an Idempotency-Key (src/outbox/commands/idempotency-keys.ts): their
 * fields, whatever the order the client wrote them in, at every depth; fingerprints recorded before they
 * were made in a stable order (the client's order) are still recognised.
 */
import { describe, expect, it } from 'vitest';
import { fingerprintsOf, isSameRequest } from '../../../src/outbox/commands/idempotency-keys.js';

describe('request fingerprints', () => {
  const contact = { kind: 'contact', to: '4915112345678', contacts: [{ name: 'Ann', number: '4915100000001' }] };
  const reordered = { contacts: [{ number: '4915100000001', name: 'Ann' }], to: '4915112345678', kind: 'contact' };

  it('are the same for the same fields in any order, at every depth, and differ for other fields', () => {
    expect(fingerprintsOf(reordered).fingerprint).toBe(fingerprintsOf(contact).fingerprint);
    expect(fingerprintsOf({ ...contact, to: '4915112345679' }).fingerprint).not.toBe(
      fingerprintsOf(contact).fingerprint,
    );
    // Arrays keep their order: two contacts swapped are another card.
    const two = { ...contact, contacts: [...contact.contacts, { name: 'Bob', number: '4915100000002' }] };
    expect(fingerprintsOf({ ...two, contacts: [...two.contacts].reverse() }).fingerprint).not.toBe(
      fingerprintsOf(two).fingerprint,
    );
  });

  it("recognise a record made the earlier way, by the client's order, and only for that request", () => {
    const recordedBefore = fingerprintsOf(reordered).legacy;
    expect(isSameRequest(recordedBefore, fingerprintsOf(reordered))).toBe(true);
    expect(isSameRequest(fingerprintsOf(contact).fingerprint, fingerprintsOf(reordered))).toBe(true);
    expect(isSameRequest(recordedBefore, fingerprintsOf({ ...reordered, to: '4915112345679' }))).toBe(false);
  });
});
