import { describe, expect, it } from 'vitest';
import { fold } from '../../src/commands/decider.js';
import { type DeviceCommand, deviceDecider } from '../../src/devices/device-decider.js';
import type { DeviceStreamEvent } from '../../src/devices/device-events.js';
import { deciderSpecification } from '../support/decider-specification.js';

const spec = deciderSpecification(deviceDecider);
const at = '2026-11-22T10:00:00.000Z';
const later = '2026-11-22T11:00:00.000Z';
const created: DeviceStreamEvent = {
  type: 'DeviceCreated',
  data: { deviceId: 'd1', name: 'Shop', engine: 'sandbox', metadata: { a: 1 }, keyHash: 'h1', at },
};
const create: DeviceCommand = {
  type: 'CreateDevice',
  deviceId: 'd1',
  name: 'Shop',
  engine: 'sandbox',
  metadata: { a: 1 },
  keyHash: 'h1',
  at,
};
const deleted: DeviceStreamEvent = { type: 'DeviceDeleted', data: { deviceId: 'd1' } };
const hooked: DeviceStreamEvent = {
  type: 'HooksConfigured',
  data: { deviceId: 'd1', url: 'https://example.com/h', events: ['message.received'], secret: 'whsec_old', at },
};
const configure = (rotateSecret: boolean): DeviceCommand => ({
  type: 'ConfigureHooks',
  deviceId: 'd1',
  url: 'https://example.com/new',
  events: ['session.state'],
  secret: 'whsec_new',
  rotateSecret,
  at: later,
});

describe('the device decider', () => {
  it('creates a device on an empty stream', () => spec.given([]).when(create).then([created]));
  it('refuses an id in use', () => spec.given([created]).when(create).thenRefused('device_exists'));
  it('refuses an id once used, after the device was deleted', () =>
    spec.given([created, deleted]).when(create).thenRefused('device_exists'));

  it('records a change and a key rotation as two events', () =>
    spec
      .given([created])
      .when({ type: 'UpdateDevice', deviceId: 'd1', name: 'Shop 2', keyHash: 'h2', at: later })
      .then([
        { type: 'DeviceUpdated', data: { deviceId: 'd1', name: 'Shop 2', at: later } },
        { type: 'DeviceKeyRotated', data: { deviceId: 'd1', keyHash: 'h2', at: later } },
      ]));
  it('records nothing for an update that asks for nothing', () =>
    spec.given([created]).when({ type: 'UpdateDevice', deviceId: 'd1', at: later }).thenNothing());
  it('refuses to update, delete or configure a device that does not exist', () => {
    spec.given([]).when({ type: 'UpdateDevice', deviceId: 'd1', name: 'x', at }).thenRefused('not_found');
    spec.given([created, deleted]).when({ type: 'DeleteDevice', deviceId: 'd1' }).thenRefused('not_found');
    spec.given([created, deleted]).when(configure(false)).thenRefused('not_found');
  });

  it('makes the secret on the first configuration and keeps it afterwards unless rotated', () => {
    spec
      .given([created])
      .when(configure(false))
      .then([
        {
          type: 'HooksConfigured',
          data: {
            deviceId: 'd1',
            url: 'https://example.com/new',
            events: ['session.state'],
            secret: 'whsec_new',
            at: later,
          },
        },
      ]);
    spec
      .given([created, hooked])
      .when(configure(false))
      .then([
        {
          type: 'HooksConfigured',
          data: {
            deviceId: 'd1',
            url: 'https://example.com/new',
            events: ['session.state'],
            secret: 'whsec_old',
            at: later,
          },
        },
      ]);
    spec
      .given([created, hooked])
      .when(configure(true))
      .then([
        {
          type: 'HooksConfigured',
          data: {
            deviceId: 'd1',
            url: 'https://example.com/new',
            events: ['session.state'],
            secret: 'whsec_new',
            at: later,
          },
        },
      ]);
  });
  it('removes hooks only when there are some', () => {
    spec
      .given([created, hooked])
      .when({ type: 'RemoveHooks', deviceId: 'd1' })
      .then([{ type: 'HooksRemoved', data: { deviceId: 'd1' } }]);
    spec.given([created]).when({ type: 'RemoveHooks', deviceId: 'd1' }).thenNothing();
  });
  it('a new secret after the hooks were removed and configured again', () =>
    spec
      .given([created, hooked, { type: 'HooksRemoved', data: { deviceId: 'd1' } }])
      .when(configure(false))
      .then([
        {
          type: 'HooksConfigured',
          data: {
            deviceId: 'd1',
            url: 'https://example.com/new',
            events: ['session.state'],
            secret: 'whsec_new',
            at: later,
          },
        },
      ]));

  it('folds the device the answers are built from', () => {
    const state = fold(deviceDecider, deviceDecider.initialState(), [
      created,
      { type: 'DeviceUpdated', data: { deviceId: 'd1', metadata: { b: 2 }, at: later } },
      hooked,
    ]);
    expect(state).toEqual({
      status: 'live',
      device: {
        id: 'd1',
        name: 'Shop',
        engine: 'sandbox',
        metadata: { b: 2 },
        keyHash: 'h1',
        createdAt: at,
        updatedAt: later,
      },
      hook: { url: 'https://example.com/h', events: ['message.received'], secret: 'whsec_old', updatedAt: at },
    });
  });
});
