/**
 * The identities read model (src/contacts/identities-read-model.ts), fed events directly: the LID ↔ number pairs
 * a device learned, a pair replacing any earlier pair of its number or of its LID; a deleted device leaving nothing.
 */
import { describe, it } from 'vitest';
import type { ContactEvent } from '../../src/contacts/contact-events.js';
import { IdentitiesReadModel } from '../../src/contacts/identities-read-model.js';
import type { DeviceEvent } from '../../src/devices/device-events.js';
import type { IdentityPair } from '../../src/engines/engine.js';
import { type GivenEvent, readModelSpecification } from '../support/read-model-specification.js';

type Event = ContactEvent | DeviceEvent;

const spec = readModelSpecification<Event, IdentitiesReadModel>((db) => new IdentitiesReadModel(db));
const learned = (deviceId: string, ...pairs: IdentityPair[]): GivenEvent<Event> => ({
  type: 'IdentitiesLearned',
  data: { deviceId, pairs },
});
const deleted = (deviceId: string): Event => ({ type: 'DeviceDeleted', data: { deviceId } });
const unknown = { number: null, lid: null };
const A = { number: '4915100000001', lid: '111@lid' };
const B = { number: '4915100000002', lid: '222@lid' };

describe('identities read model', () => {
  it('answers a pair by its number or its LID, per device, over several batches', () => {
    spec
      .given(learned('d1', A))
      .given(learned('d1', B), learned('d2', { number: A.number, lid: '999@lid' }))
      .then((model) => model.identity('d1', A.number), A)
      .then((model) => model.identity('d1', '222@lid'), B)
      .then((model) => model.identity('d2', A.number), { number: A.number, lid: '999@lid' })
      .then((model) => model.identity('d2', '111@lid'), unknown)
      .then((model) => model.identity('d1', '4915100000003'), unknown);
  });

  it('a new pair replaces the earlier pair of its number and the earlier pair of its LID', () => {
    spec
      .given(learned('d1', A, B))
      // A's number takes B's LID: A's old LID and B's number are paired no more.
      .given(learned('d1', { number: A.number, lid: B.lid }))
      .then((model) => model.identity('d1', A.number), { number: A.number, lid: B.lid })
      .then((model) => model.identity('d1', B.lid), { number: A.number, lid: B.lid })
      .then((model) => model.identity('d1', A.lid), unknown)
      .then((model) => model.identity('d1', B.number), unknown)
      // Learned again (as a rebuild meets it): the same answers.
      .given(learned('d1', { number: A.number, lid: B.lid }, { number: A.number, lid: B.lid }))
      .then((model) => model.identity('d1', B.lid), { number: A.number, lid: B.lid });
  });

  it("forgets a deleted device's pairs, and leaves other devices' alone", () => {
    spec
      .given(learned('d1', A), learned('d2', A))
      .given(deleted('d1'))
      .then((model) => model.identity('d1', A.number), unknown)
      .then((model) => model.identity('d1', A.lid), unknown)
      .then((model) => model.identity('d2', A.lid), A);
  });
});
