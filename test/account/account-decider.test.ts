import { describe, it } from 'vitest';
import { accountDecider } from '../../src/account/account-decider.js';
import { deciderSpecification } from '../support/decider-specification.js';

const spec = deciderSpecification(accountDecider);
const A = '4915111111111';
const B = '4915122222222';

describe('the account decider', () => {
  it('records the profile fields that change, nothing when none does', () => {
    spec
      .given([])
      .when({ type: 'ChangeProfile', deviceId: 'd', name: 'Shop' })
      .then([{ type: 'ProfileChanged', data: { deviceId: 'd', name: 'Shop' } }]);
    spec
      .given([{ type: 'ProfileChanged', data: { deviceId: 'd', name: 'Shop' } }])
      .when({ type: 'ChangeProfile', deviceId: 'd', name: 'Shop', about: 'Open' })
      .then([{ type: 'ProfileChanged', data: { deviceId: 'd', about: 'Open' } }]);
    spec
      .given([{ type: 'ProfileChanged', data: { deviceId: 'd', name: 'Shop' } }])
      .when({ type: 'ChangeProfile', deviceId: 'd', name: 'Shop' })
      .thenNothing();
  });

  it('blocks and unblocks idempotently', () => {
    spec
      .given([])
      .when({ type: 'Block', deviceId: 'd', number: A })
      .then([{ type: 'ContactBlocked', data: { deviceId: 'd', number: A } }]);
    spec
      .given([{ type: 'ContactBlocked', data: { deviceId: 'd', number: A } }])
      .when({ type: 'Block', deviceId: 'd', number: A })
      .thenNothing();
    spec.given([]).when({ type: 'Unblock', deviceId: 'd', number: A }).thenNothing();
    spec
      .given([{ type: 'ContactBlocked', data: { deviceId: 'd', number: A } }])
      .when({ type: 'Unblock', deviceId: 'd', number: A })
      .then([{ type: 'ContactUnblocked', data: { deviceId: 'd', number: A } }]);
  });

  it("records the network's blocklist only when it differs", () => {
    spec
      .given([{ type: 'ContactBlocked', data: { deviceId: 'd', number: A } }])
      .when({ type: 'RefreshBlocklist', deviceId: 'd', numbers: [A] })
      .thenNothing();
    spec
      .given([{ type: 'ContactBlocked', data: { deviceId: 'd', number: A } }])
      .when({ type: 'RefreshBlocklist', deviceId: 'd', numbers: [B, A] })
      .then([{ type: 'BlocklistRefreshed', data: { deviceId: 'd', numbers: [A, B] } }]);
  });
});
