import { statSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadOrCreateAdminKey } from '../src/auth/admin-key.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { tempDir } from './support/temp-dir.js';

/** What loadConfig throws for these variables (undefined: it took them). */
function refusalOf(env: Record<string, string>): Error | undefined {
  try {
    loadConfig(env);
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

describe('configuration', () => {
  it('has sane defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      adminApiKey: undefined,
      eventStoreUrl: undefined,
      defaultEngine: 'baileys',
      webhookAllowPrivateNetworks: false,
      logLevel: 'info',
      bodyLimitBytes: 1024 * 1024,
    });
    expect(config.dataDir).toMatch(/data$/);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      ADMIN_API_KEY: 'a-long-enough-admin-key',
      DATA_DIR: '/tmp/x',
      EVENTSTORE_URL: 'esdb://localhost:2113?tls=false',
      DEFAULT_ENGINE: 'sandbox',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      LOG_LEVEL: 'debug',
      BODY_LIMIT_BYTES: '2048',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      adminApiKey: 'a-long-enough-admin-key',
      dataDir: '/tmp/x',
      eventStoreUrl: 'esdb://localhost:2113?tls=false',
      defaultEngine: 'sandbox',
      webhookAllowPrivateNetworks: true,
      logLevel: 'debug',
      bodyLimitBytes: 2048,
    });
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['ADMIN_API_KEY', 'short'],
    ['EVENTSTORE_URL', 'http://localhost:2113'],
    ['EVENTSTORE_URL', 'not a url'],
    ['DEFAULT_ENGINE', 'telegram'],
    ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['BODY_LIMIT_BYTES', '1.5'],
    ['MAX_CONNECTIONS_PER_ADDRESS', '0'],
    ['TRUST_PROXY', 'true'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['TRUST_PROXY', '127.1'],
    ['TRUST_PROXY', 'proxy.internal'],
  ])('refuses %s=%s naming the variable', (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(new RegExp(`^${variable}: `));
  });

  it('reads the connection cap per address and the trusted proxies (none by default)', () => {
    expect(loadConfig({}).server).toMatchObject({ maxConnectionsPerAddress: 512, trustProxy: [] });
    expect(
      loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: '16', TRUST_PROXY: ' 127.0.0.1, 10.0.0.0/8 ,fd00::/8' }).server,
    ).toMatchObject({ maxConnectionsPerAddress: 16, trustProxy: ['127.0.0.1', '10.0.0.0/8', 'fd00::/8'] });
    expect(loadConfig({ TRUST_PROXY: 'none' }).server.trustProxy).toEqual([]);
  });

  it('takes EventStoreDB cluster URLs and never prints the credentials of a bad one (issue 13, defect 6)', () => {
    for (const url of [
      'esdb://a:2113,b:2113,c:2113?tls=true&nodePreference=leader',
      'esdb+discover://admin:changeit@cluster.example.com:2113',
      'kurrentdb://admin:changeit@10.0.0.1:2113,10.0.0.2:2113/?tls=false',
      'esdb://[::1]:2113?tls=false',
    ]) {
      expect(loadConfig({ EVENTSTORE_URL: url }).eventStoreUrl).toBe(url);
    }
    for (const bad of [
      'esdb://admin:s3cr3t-pw@a:2113,,b:2113',
      'esdb://admin:s3cr3t-pw@bad host:2113',
      'http://admin:s3cr3t-pw@a:2113',
    ]) {
      const error = refusalOf({ EVENTSTORE_URL: bad });
      expect(error).toBeInstanceOf(ConfigError);
      expect(error!.message).toMatch(/^EVENTSTORE_URL: /);
      expect(error!.message).not.toContain('s3cr3t-pw');
    }
  });

  it('refuses EventStoreDB settings its client would only warn about (it prints the connection string, password and all, with the warning)', () => {
    expect(
      loadConfig({
        EVENTSTORE_URL: 'esdb://admin:changeit@db:2113?TLS=true&node-preference=leader&keepAliveInterval=10000',
      }).eventStoreUrl,
    ).toBeDefined();
    for (const [bad, words] of [
      [
        'esdb://admin:s3cr3t-pw@db:2113?tls=true&tlsverifycert=false',
        /tlsVerifyCert=false is not supported.*tlsCAFile/,
      ],
      ['esdb://admin:s3cr3t-pw@db:2113?tls=true&nodePrefrence=leader', /does not know: "nodePrefrence"/],
    ] as const) {
      const error = refusalOf({ EVENTSTORE_URL: bad });
      expect(error).toBeInstanceOf(ConfigError);
      expect(error!.message).toMatch(words);
      expect(error!.message).not.toContain('s3cr3t-pw');
    }
  });

  it('never prints an EventStoreDB password that holds / ? : or @, wherever the URL is refused', () => {
    for (const bad of [
      'esdb://admin:pa/ss?word@db.example:2113?tls=true',
      'esdb://admin:pa/ss@db.example:2113',
      'esdb://admin:p@ss:word@bad host:2113',
      'esdb://admin:pa?ss@a:2113,,b:2113',
      'admin:pa/ss?word@db.example:2113',
    ]) {
      const error = refusalOf({ EVENTSTORE_URL: bad });
      expect(error, bad).toBeInstanceOf(ConfigError);
      expect(error!.message).toMatch(/^EVENTSTORE_URL: /);
      for (const part of ['pa/ss', 'word@', 'p@ss', 'pa?ss', 'ss:word'])
        expect(error!.message, bad).not.toContain(part);
    }
    // As printed at start by src/main.ts: test/main.e2e.test.ts.
  });

  it('takes a bare 0 as a duration, and no other number without a unit', () => {
    expect(loadConfig({ STREAM_FLUSH_INTERVAL: '0' }).stream.flushMs).toBe(0);
    expect(loadConfig({ OUTBOX_SPACING: ' 0 ' }).outbox.spacingMaxMs).toBe(0);
    expect(loadConfig({ OUTBOX_SPACING: '0ms' }).outbox.spacingMaxMs).toBe(0);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0,5s' }).webhooks.retrySchedule).toEqual([0, 5_000]);
    for (const value of ['1', '00', '0.0', '-0', '25']) {
      expect(() => loadConfig({ STREAM_FLUSH_INTERVAL: value }), value).toThrow(
        /^STREAM_FLUSH_INTERVAL: must be a duration/,
      );
    }
    // Where 0 is below the allowed range it is refused as out of range, not as a bad duration.
    expect(() => loadConfig({ STREAM_HEARTBEAT: '0' })).toThrow(/^STREAM_HEARTBEAT: must be between 10 ms/);
  });

  it('reads durations with a unit (250ms, 5s, 2m, 1h, 7d, also 1.5h or 2 days), never a bare number', () => {
    const retention = (value: string) => loadConfig({ WEBHOOK_RETENTION: value }).webhooks.retentionMs;
    expect([retention('2m'), retention(' 1h '), retention('7d'), retention('1.5h'), retention('2 days')]).toEqual([
      120_000, 3_600_000, 604_800_000, 5_400_000, 172_800_000,
    ]);
    expect(loadConfig({ OUTBOX_SPACING: '250ms' }).outbox.spacingMaxMs).toBe(250);
    expect(loadConfig({}).outbox.messageTtlMs).toBeUndefined();
    expect(loadConfig({}).waWebVersion).toBeUndefined();
    expect(loadConfig({ WA_WEB_VERSION: '2.3000.1023223821' }).waWebVersion).toEqual([2, 3000, 1023223821]);
    expect(loadConfig({ WA_WEB_VERSION: 'LATEST' }).waWebVersion).toBe('latest');
    expect(() => loadConfig({ WA_WEB_VERSION: '2.3000' })).toThrow(/^WA_WEB_VERSION: must be a WhatsApp Web version/);
    expect(loadConfig({ OUTBOX_MESSAGE_TTL: 'none' }).outbox.messageTtlMs).toBeUndefined();
    expect(loadConfig({ OUTBOX_MESSAGE_TTL: '2h' }).outbox.messageTtlMs).toBe(7_200_000);
    expect(() => loadConfig({ OUTBOX_MESSAGE_TTL: 'soon' })).toThrow(/^OUTBOX_MESSAGE_TTL: must be a duration/);
    for (const value of ['86400000', '-5m', '1e3s', '5 parsecs'])
      expect(() => retention(value), value).toThrow(/^WEBHOOK_RETENTION: must be a duration/);
  });

  it('refuses a base delay above its maximum, naming both (it was cut to the maximum without a word)', () => {
    const outbox = refusalOf({ OUTBOX_RETRY_DELAY: '10m' });
    expect(outbox).toBeInstanceOf(ConfigError);
    expect(outbox?.message).toMatch(/^OUTBOX_RETRY_DELAY: must not exceed OUTBOX_RETRY_MAX_DELAY \(600000 > 300000\)/);
    expect(refusalOf({ OUTBOX_RETRY_DELAY: '10m', OUTBOX_RETRY_MAX_DELAY: '10m' })).toBeUndefined();
    const session = refusalOf({ SESSION_RECONNECT_BASE_DELAY_MS: '5000', SESSION_RECONNECT_MAX_DELAY_MS: '1000' });
    expect(session).toMatchObject({ variable: 'SESSION_RECONNECT_BASE_DELAY_MS' });
    expect(refusalOf({ SESSION_RECONNECT_BASE_DELAY_MS: '0', SESSION_RECONNECT_MAX_DELAY_MS: '0' })).toBeUndefined();
  });

  it('generates the admin key once, mode 0600, and keeps it', () => {
    const dir = tempDir();
    const log = pino({ level: 'silent' });
    const first = loadOrCreateAdminKey(undefined, dir, log);
    expect(first).toMatch(/^ak_[A-Za-z0-9_-]{43}$/);
    expect(statSync(join(dir, 'admin.key')).mode & 0o777).toBe(0o600);
    expect(loadOrCreateAdminKey(undefined, dir, log)).toBe(first);
    expect(loadOrCreateAdminKey('configured-admin-key', dir, log)).toBe('configured-admin-key');
  });
});
