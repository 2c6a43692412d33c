/** The V8 settings src/main.ts gives the gateway's process (src/v8-flags.ts). */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { V8_FLAGS, applyV8Flags } from '../src/v8-flags.js';

describe('applyV8Flags', () => {
  it('turns allocation-site pretenuring off', () => {
    const set: string[] = [];
    applyV8Flags((flags) => set.push(flags));
    expect(set).toContain('--no-allocation-site-pretenuring');
  });

  it('names only flags this Node knows (V8 ignores an unknown one without a word)', async () => {
    const { stdout: known } = await promisify(execFile)(process.execPath, ['--v8-options'], {
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    });
    for (const flag of V8_FLAGS) {
      const name = flag.replace(/^--(no-)?/, '').replace(/=.*$/, '');
      expect(known, flag).toContain(`--${name} `);
    }
  });
});
