import { describe, expect, it } from 'vitest';
import { settingsDecider } from '../../src/settings/settings-decider.js';
import { dialUrlOf, proxySettingOf, redactProxyCredentials } from '../../src/settings/proxy-url.js';
import { deciderSpecification } from '../support/decider-specification.js';

const spec = deciderSpecification(settingsDecider);
const proxy = { url: 'socks5://***:***@p.example:1080', credentials: { username: 'u', password: 'p@ss' } };

describe('the settings decider', () => {
  it('records the settings that change, nothing when none does', () => {
    spec
      .given([])
      .when({ type: 'ChangeSettings', deviceId: 'd', change: { rejectCalls: true, proxy: null } })
      .then([{ type: 'DeviceSettingsChanged', data: { deviceId: 'd', rejectCalls: true } }]);
    spec
      .given([{ type: 'DeviceSettingsChanged', data: { deviceId: 'd', proxy } }])
      .when({ type: 'ChangeSettings', deviceId: 'd', change: { proxy: { ...proxy } } })
      .thenNothing();
    spec
      .given([{ type: 'DeviceSettingsChanged', data: { deviceId: 'd', proxy } }])
      .when({ type: 'ChangeSettings', deviceId: 'd', change: { proxy: null, rejectCallsMessage: 'Write' } })
      .then([{ type: 'DeviceSettingsChanged', data: { deviceId: 'd', rejectCallsMessage: 'Write', proxy: null } }]);
  });

  it('merges a pacing change with the policy the stream holds: the parts it does not name stay', () => {
    spec
      .given([{ type: 'DeviceSettingsChanged', data: { deviceId: 'd', pacing: { timezone: 'UTC', dailyCap: 3 } } }])
      .when({ type: 'ChangeSettings', deviceId: 'd', change: {}, pacing: { typing: true } })
      .then([
        {
          type: 'DeviceSettingsChanged',
          data: { deviceId: 'd', pacing: { timezone: 'UTC', dailyCap: 3, typing: true } },
        },
      ]);
    spec
      .given([{ type: 'DeviceSettingsChanged', data: { deviceId: 'd', pacing: { timezone: 'UTC', dailyCap: 3 } } }])
      .when({ type: 'ChangeSettings', deviceId: 'd', change: {}, pacing: { dailyCap: 3 } })
      .thenNothing();
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

  it('refuses *** credentials: the mask answers show is never a real credential', () => {
    for (const url of [
      'http://***:***@p.example:3128',
      'http://u:***@p.example:3128',
      'socks5://%2A%2A%2A:p@p.example:1080',
    ]) {
      expect(proxySettingOf(url, open), url).toMatch(/`\*\*\*` credentials/);
    }
    expect(proxySettingOf('http://u***:p@p.example:3128', open)).toMatchObject({
      credentials: { username: 'u***', password: 'p' },
    });
  });

  it('refuses other schemes, paths, and what the address rule refuses', () => {
    expect(proxySettingOf('ftp://p.example:21', open)).toMatch(/only http, https and socks5/);
    expect(proxySettingOf('http://p.example:1/x', open)).toMatch(/path/);
    expect(proxySettingOf('http://10.0.0.1:3128', () => 'points to 10.0.0.1, in the private range')).toMatch(/private/);
  });

  it('stores every host in ASCII as an http URL would have it (socks5 is no special scheme: its host is kept as typed)', () => {
    expect(proxySettingOf('socks5://bücher.example:1080', open)).toEqual({
      url: 'socks5://xn--bcher-kva.example:1080',
    });
    expect(proxySettingOf('https://bücher.example', open)).toEqual({ url: 'https://xn--bcher-kva.example' });
    expect(proxySettingOf('socks5://u:p@BÜCHER.Example:1080', open)).toEqual({
      url: 'socks5://***:***@xn--bcher-kva.example:1080',
      credentials: { username: 'u', password: 'p' },
    });
    expect(proxySettingOf('socks5://Proxy.EXAMPLE:1080', open)).toEqual({ url: 'socks5://proxy.example:1080' });
    expect(proxySettingOf('socks5://[::1]:1080', open)).toEqual({ url: 'socks5://[::1]:1080' });
    // The host judged is the host stored, and so the host dialled.
    const judged: string[] = [];
    proxySettingOf('socks5://%6c%6fcalhost:1080', (url) => void judged.push(url));
    expect(judged).toEqual(['http://localhost:1080/']);
    expect(proxySettingOf('socks5://2130706433:1080', open)).toEqual({ url: 'socks5://127.0.0.1:1080' });
    expect(proxySettingOf('socks5://ex%2Fample:1080', open)).toBe('names a host that is not a valid host name');
  });

  it('redacts credentials in text', () => {
    expect(redactProxyCredentials('connect to http://bob:hunter2@10.0.0.1:3128 failed')).toBe(
      'connect to http://***:***@10.0.0.1:3128 failed',
    );
  });
});
