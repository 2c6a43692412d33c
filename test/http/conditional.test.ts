import { describe, expect, it } from 'vitest';
import { entityTag, noneMatch } from '../../src/http/conditional.js';

describe('conditional GETs', () => {
  it('an entity tag is its parts, quoted; a part with other characters is written in base64url', () => {
    expect(entityTag('aB3_-x.12.7', '4915100027772')).toBe('"aB3_-x.12.7.4915100027772"');
    expect(entityTag('v', '"+49 151"')).toBe(`"v.${Buffer.from('"+49 151"').toString('base64url')}"`);
    expect(entityTag('v', '')).toBe('"v."');
  });

  it('If-None-Match names the tag: alone, in a list, weak, or as *', () => {
    expect(noneMatch('"a.1"', '"a.1"')).toBe(true);
    expect(noneMatch('"x", W/"a.1" ', '"a.1"')).toBe(true);
    expect(noneMatch('*', '"a.1"')).toBe(true);
    expect(noneMatch('"a.2"', '"a.1"')).toBe(false);
    expect(noneMatch('a.1', '"a.1"')).toBe(false);
    expect(noneMatch('', '"a.1"')).toBe(false);
    expect(noneMatch(undefined, '"a.1"')).toBe(false);
  });
});
