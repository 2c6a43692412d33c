import { describe, expect, it } from 'vitest';
import type { Problem } from '../../src/http/problem.js';
import { CreateDeviceBody } from '../../src/http/schemas/devices.js';
import { TextBody } from '../../src/http/schemas/send.js';
import { compileValidator } from '../../src/http/validation.js';

/** The problem a body gets, as the API answers it. */
function refusal(
  schema: Parameters<typeof compileValidator>[0],
  body: unknown,
): { detail: string; errors: Array<{ path: string; message: string }> } {
  try {
    compileValidator(schema, 'body').parse(body);
  } catch (error) {
    const problem = error as Problem;
    return { detail: problem.detail!, errors: problem.extra.errors! };
  }
  throw new Error('accepted');
}

describe('validation messages in plain words', () => {
  it('an enum lists the allowed values', () => {
    const { detail, errors } = refusal(CreateDeviceBody, { name: 'x', engine: 'telegram' });
    expect(errors).toEqual([{ path: '/engine', message: 'must be one of: baileys, sandbox' }]);
    expect(detail).toBe('body/engine must be one of: baileys, sandbox');
  });

  it('a number field says what a number looks like, never the regex', () => {
    const { errors } = refusal(TextBody, { to: 'call me', text: 'x' });
    expect(errors[0].path).toBe('/to');
    expect(errors[0].message).toContain('country code');
    expect(errors[0].message).toContain('4915112345678');
    expect(errors.map((e) => e.message).join(' ')).not.toMatch(/\^|\$|\[0-9\]/);
  });

  it('other patterns, lengths, types, missing fields and limits in words, naming the field', () => {
    const id = refusal(CreateDeviceBody, { id: '-bad', name: 'x' });
    expect(id.errors[0]).toEqual({ path: '/id', message: expect.stringContaining('letters, digits') });
    expect(refusal(CreateDeviceBody, { name: '' }).errors[0]).toEqual({ path: '/name', message: 'must not be empty' });
    expect(refusal(CreateDeviceBody, { name: 5 }).errors[0]).toEqual({
      path: '/name',
      message: 'must be text (a JSON string), not a whole number',
    });
    expect(refusal(CreateDeviceBody, {}).errors[0]).toEqual({ path: '/', message: 'needs `name`, which is missing' });
    expect(refusal(CreateDeviceBody, { name: 'x'.repeat(201) }).errors[0].message).toBe(
      'must be at most 200 characters long',
    );
    const many = refusal(TextBody, { to: 'x', text: '', colour: 1, size: 2 });
    expect(many.errors.length).toBe(4);
    expect(many.detail).toMatch(/^body\/\S+ .+; body\/\S+ .+; body\/\S+ .+; and 1 more \(see errors\)$/);
  });
});
