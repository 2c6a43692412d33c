import type { LookupFunction } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MediaFetcher, MediaUnavailableError } from '../../src/media/media-fetcher.js';
import { OutboundGuard } from '../../src/net/outbound-guard.js';
import { tempDir } from '../support/temp-dir.js';

/** A resolver that fails as a missing name does: no network is asked. */
const notFound: LookupFunction = (hostname, _options, callback) => {
  const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  (callback as (error: Error) => void)(error);
};

describe('media fetch failures say why', () => {
  it('an unknown host name is dns_failure', async () => {
    const guard = new OutboundGuard({ allowPrivateNetworks: true });
    try {
      const fetcher = new MediaFetcher(guard, 5_000, notFound);
      const failure = await fetcher
        .fetchTo('http://no-such-host.invalid/cat.png', join(tempDir('dmg-fetch-'), 'x'), 1024)
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(MediaUnavailableError);
      expect(failure).toMatchObject({
        code: 'media_unavailable',
        reason: 'dns_failure',
        message: expect.stringContaining('ENOTFOUND'),
      });
    } finally {
      guard.destroy();
    }
  });
});
