/**
 * Which parts of a URL are credentials, and how they are shown: the user part and credential-named query
 * parameters masked, everything else kept byte for byte; an answer's mask told from real credentials.
 */
import { describe, expect, it } from 'vitest';
import { hasMaskedCredentials, maskUrlCredentials, maskUrlsIn } from '../../src/secrets/url-credentials.js';
import { redactSecrets } from '../../src/history/redact.js';

describe('URL credentials', () => {
  it('masks the user part and credential-named parameters, and keeps the rest as it was written', () => {
    expect(maskUrlCredentials('https://user:pa%40ss@hooks.example:8443/in?a=1&token=abc&b=x%20y#f')).toBe(
      'https://***:***@hooks.example:8443/in?a=1&token=***&b=x%20y#f',
    );
    expect(maskUrlCredentials('https://only-user@hooks.example/in')).toBe('https://***:***@hooks.example/in');
    for (const name of ['access_token', 'api_key', 'apiKey', 'X-Amz-Signature', 'sig', 'client_secret', 'password']) {
      expect(maskUrlCredentials(`https://h.example/?${name}=s3cret&page=2`), name).toBe(
        `https://h.example/?${name}=***&page=2`,
      );
    }
    // A URL as answers show it is shown the same again (PUT back, it must match).
    for (const text of ['http://u:p@h.example:3128', 'https://u@h.example?token=t', 'socks5://a:b@p.example:1080']) {
      expect(maskUrlCredentials(maskUrlCredentials(text)), text).toBe(maskUrlCredentials(text));
    }
    expect(maskUrlCredentials('http://u:p@h.example:3128')).toBe('http://***:***@h.example:3128');
    // Nothing to mask: the very same text (not the URL re-serialised).
    for (const text of ['https://h.example/a?b=c+d', 'https://H.example:443', 'not a url', '']) {
      expect(maskUrlCredentials(text)).toBe(text);
    }
  });

  it('masks credentials the URL parser would not find: unparsable URLs, `;` separators, fragment parameters', () => {
    // Refused by the URL parser (a space, a bad port, a bad IPv6 host), yet quoted in error messages.
    expect(maskUrlCredentials('http://user:pa ss@h.example/x')).toBe('http://***:***@h.example/x');
    expect(maskUrlCredentials('https://u:p@h.example:99999/?token=t')).toBe(
      'https://***:***@h.example:99999/?token=***',
    );
    expect(maskUrlCredentials('http://u:p@[::1/x')).toBe('http://***:***@[::1/x');
    expect(maskUrlsIn('connect to amqp://guest:s3cret@[bad failed')).toBe('connect to amqp://***:***@[bad failed');
    // `;` separates parameters as `&` does (older servers, matrix-style queries).
    expect(maskUrlCredentials('https://h.example/in?a=1;token=abc;b=2')).toBe('https://h.example/in?a=1;token=***;b=2');
    // OAuth's implicit flow puts the token in the fragment.
    expect(maskUrlCredentials('https://h.example/cb#access_token=abc&state=x')).toBe(
      'https://h.example/cb#access_token=***&state=x',
    );
    expect(maskUrlCredentials('https://h.example/doc#section-2')).toBe('https://h.example/doc#section-2');
    // Masks are told from credentials there too.
    expect(hasMaskedCredentials('https://h.example/in?a=1;token=***')).toBe(true);
    expect(hasMaskedCredentials('https://h.example/cb#access_token=***')).toBe(true);
    expect(hasMaskedCredentials('https://h.example/cb#access_token=real')).toBe(false);
    // Not a URL: a scheme must come first.
    expect(maskUrlCredentials('a b://u:p@h')).toBe('a b://u:p@h');
  });

  it('masks URLs inside longer text, and history does so in every string', () => {
    expect(maskUrlsIn('posting to https://u:p@h.example/x?token=t failed')).toBe(
      'posting to https://***:***@h.example/x?token=*** failed',
    );
    expect(
      redactSecrets({
        url: 'http://u:p@h.example/?key=k',
        nested: [{ text: 'see socks5://a:b@proxy.example:1080' }],
        sealedUrl: 'sealed:v1:abc',
        proxy: { url: 'http://***:***@p.example:3128', sealedCredentials: 'sealed:v1:def' },
      }),
    ).toEqual({
      url: 'http://***:***@h.example/?key=***',
      nested: [{ text: 'see socks5://***:***@proxy.example:1080' }],
      sealedUrl: '[redacted]',
      proxy: { url: 'http://***:***@p.example:3128', sealedCredentials: '[redacted]' },
    });
  });

  it('tells the mask an answer shows from real credentials', () => {
    expect(hasMaskedCredentials('https://***:***@h.example/in?token=***')).toBe(true);
    expect(hasMaskedCredentials('https://user:***@h.example/in')).toBe(true);
    expect(hasMaskedCredentials('https://h.example/in?token=***')).toBe(true);
    expect(hasMaskedCredentials('https://h.example/in?q=***')).toBe(false);
    expect(hasMaskedCredentials('https://user:pass@h.example/in?token=abc')).toBe(false);
  });
});
