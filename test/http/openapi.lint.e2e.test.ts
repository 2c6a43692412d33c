/**
 * /openapi.json passes Redocly's lint with its `recommended` rules, errors and warnings alike: the CLI
 * (@redocly/cli) is run on the document a real gateway serves, as a user of the API would run it.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, tempDir } from '../support/gateway.js';

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
}

const redoclyCli = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin/cli.js');

/** `redocly lint` on the document, in a directory of its own (no redocly.yaml there), its JSON report. */
async function lint(document: unknown): Promise<LintReport> {
  const dir = tempDir('dmg-redocly-');
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  const args = [redoclyCli, 'lint', file, '--extends=recommended', '--format=json'];
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)(process.execPath, args, { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 }));
  } catch (error) {
    // It exits 1 when it finds errors; the report is on stdout all the same.
    stdout = (error as { stdout?: string }).stdout ?? '';
    if (!stdout) throw error;
  }
  return JSON.parse(stdout) as LintReport;
}

describe('the OpenAPI document under Redocly lint', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let document: unknown;
  beforeAll(async () => {
    gateway = await startTestGateway();
    const answer = await gateway.api('GET', '/openapi.json');
    expect(answer.status).toBe(200);
    document = answer.body;
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('has no error and no warning with the recommended rules', { timeout: 120_000 }, async () => {
    const report = await lint(document);
    const problems = report.problems.map(({ ruleId, severity, message, location }) => ({
      ruleId,
      severity,
      message,
      at: location.map((l) => l.pointer),
    }));
    expect(problems).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
  });
});
