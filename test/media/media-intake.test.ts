/**
 * The intake's rules for what accompanies media bytes: a multipart file part's file name is a plain display
 * name (1..255 characters, no control characters, no path), and a `data:` URL's type is a media type.
 */
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors/domain-error.js';
import { MediaIntake, uploadFilename } from '../../src/media/media-intake.js';
import { MediaStore } from '../../src/media/media-store.js';
import { OutboundGuard } from '../../src/net/outbound-guard.js';
import { tempDir } from '../support/temp-dir.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

const refusalOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return { code: error.code, fields: error.fields?.map((f) => f.path) };
    throw error;
  }
  return undefined;
};

describe('a multipart file name', () => {
  it('is kept as its last path segment', () => {
    expect(uploadFilename('invoice 4711.pdf')).toBe('invoice 4711.pdf');
    expect(uploadFilename('../../etc/passwd')).toBe('passwd');
    expect(uploadFilename('C:\\Users\\me\\notes.txt')).toBe('notes.txt');
    expect(uploadFilename('a'.repeat(255))).toHaveLength(255);
  });

  it.each([
    ['a'.repeat(256)],
    ['a\u0000.txt'],
    ['a\nb.txt'],
    ['a\u007f.txt'],
    ['a\u0085.txt'],
    ['dir/'],
    ['..'],
    ['.'],
  ])('is refused as %j, naming /file', (name) => {
    expect(refusalOf(() => uploadFilename(name))).toEqual({ code: 'invalid_request', fields: ['/file'] });
  });
});

describe('a data: URL in base64 text', () => {
  const guard = new OutboundGuard({ allowPrivateNetworks: false });
  afterAll(() => guard.destroy());

  it('has its type checked like the mimetype field, and nothing stored when it is not one', async () => {
    const store = new MediaStore(tempDir('dmg-intake-'));
    await store.init();
    const intake = new MediaIntake(
      store,
      { maxBytes: 1024 * 1024, fileMaxBytes: 1024 * 1024, fetchTimeoutMs: 1_000 },
      guard,
    );
    const accept = (text: string) => intake.accept('shop', 'o-1', 'image', { from: 'base64', text }, {});
    await expect(accept(`data:image/png\r\nX-Injected: 1;base64,${PNG}`)).rejects.toMatchObject({
      code: 'invalid_request',
      fields: [{ path: '/base64' }],
    });
    await expect(accept(`data:image/${'x'.repeat(300)};base64,${PNG}`)).rejects.toMatchObject({
      code: 'invalid_request',
      fields: [{ path: '/base64' }],
    });
    expect(existsSync(store.pathOf('shop', 'o-1'))).toBe(false);
    expect(await accept(`data:image/png;base64,${PNG}`)).toMatchObject({ source: 'stored', mimetype: 'image/png' });
  });
});
