import { describe, expect, it } from 'vitest';
import { settingsDecider } from '../../src/settings/settings-decider.js';
import { dialUrlOf, proxySettingOf, redactProxyCredentials } from '../../src/settings/proxy-url.js';
import { deciderSpecification } from '../support/decider-specification.js';

const spec = deciderSpecification(settingsDecider);
const proxy = { url: 'socks5://***:***@p.example:1080', credentials: { username: 'u', password: 'p@ss' } };

describe('the settings decider', () => {
  it('records the settings that change, nothing when none does', () => {
    spec.given([]).when({ type: 'ChangeSettings', deviceId: 'd', change: { rejectCalls: true, proxy: null } }).then([{ type: 'DeviceSettingsChanged', data: { deviceId: 'd', rejectCalls: true } }]);
    spec.given([{ type: 'DeviceSettingsChanged', data: { deviceId: 'd', proxy } }]).when({ type: 'ChangeSettings', deviceId: 'd', change: { proxy: { ...proxy } } }).thenNothing();
    spec
      .given([{ type: 'DeviceSettingsChanged', data: { deviceId: 'd', proxy } }])
      .when({ type: 'ChangeSettings', deviceId: 'd', change: { proxy: null, rejectCallsMessage: 'Write' } })
      .then([{ type: 'DeviceSettingsChanged', data: { deviceId: 'd', rejectCallsMessage: 'Write', proxy: null } }]);
  });
});

describe('proxy URLs', () => {
  const open = () => undefined;
  it('keeps the credentials apart, shows them as ***, and puts them back to dial', () => {
    const setting = proxySettingOf('socks5://u:p%40ss@p.example:1080', open);
    expect(setting).toEqual(proxy);
    expect(dialUrlOf(proxy)).toBe('socks5://u:p%40ss@p.example:1080');
    expect(proxySettingOf('https://p.example:8443/', open)).toEqual({ url: 'https://p.example:8443' });
  });

  it('refuses other schemes, paths, and what the address rule refuses', () => {
    expect(proxySettingOf('ftp://p.example:21', open)).toMatch(/only http, https and socks5/);
    expect(proxySettingOf('http://p.example:1/x', open)).toMatch(/path/);
    expect(proxySettingOf('http://10.0.0.1:3128', () => 'points to 10.0.0.1, in the private range')).toMatch(/private/);
  });

  it('redacts credentials in text', () => {
    expect(redactProxyCredentials('connect to http://bob:hunter2@10.0.0.1:3128 failed')).toBe('connect to http://***:***@10.0.0.1:3128 failed');
  });
});
