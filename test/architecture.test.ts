/**
 * The architecture rules of .dependency-cruiser.cjs (docs/architecture.md, "Folders and their rules"):
 * `npm test` runs them on src/ before vitest; this test shows that each rule does catch a violation, on a
 * small tree made for it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { cruise } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';
import { tempDir } from './support/gateway.js';

const require = createRequire(import.meta.url);
const config = require('../.dependency-cruiser.cjs') as { forbidden: unknown[]; options: Record<string, unknown> };

function tree(files: Record<string, string>): string {
  const root = tempDir('dmg-architecture-');
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), source);
  }
  return root;
}

async function violations(root: string): Promise<string[]> {
  const { tsConfig: _repoTsConfig, ...options } = config.options;
  const cwd = process.cwd();
  process.chdir(root); // dependency-cruiser resolves paths from the working directory
  try {
    const result = await cruise(['src'], {
      ...options,
      ruleSet: { forbidden: config.forbidden },
      validate: true,
    } as never);
    const output = result.output as {
      summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> };
    };
    return output.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
  } finally {
    process.chdir(cwd);
  }
}

describe('architecture rules', () => {
  it('catch a folder cycle, HTTP below the edge, engines using the outbox, and a store that knows the domain', async () => {
    const root = tree({
      'src/a/x.ts': "import '../b/y.js';\nexport const x = 1;\n",
      'src/b/y.ts': "import '../a/x.js';\nexport const y = 1;\n",
      'src/devices/w.ts': "import '../http/p.js';\nexport const w = 1;\n",
      'src/http/p.ts': 'export const p = 1;\n',
      'src/engines/e.ts': "import '../webhooks/h.js';\nexport const e = 1;\n",
      'src/webhooks/h.ts': 'export const h = 1;\n',
      'src/eventstore/z.ts': "import '../devices/w.js';\nexport const z = 1;\n",
    });
    expect(await violations(root)).toEqual([
      'engines-know-no-outbox-or-webhooks: src/engines → src/webhooks',
      'eventstore-knows-no-domain: src/eventstore → src/devices',
      'http-only-from-the-edge: src/devices → src/http',
      'no-folder-cycles: src/a → src/b',
    ]);
  });

  it('let a tree that keeps them pass', async () => {
    const root = tree({
      'src/gateway.ts': "import './http/p.js';\nimport './devices/w.js';\n",
      'src/http/p.ts': "import '../devices/w.js';\nexport const p = 1;\n",
      'src/devices/w.ts': "import '../eventstore/z.js';\nexport const w = 1;\n",
      'src/eventstore/z.ts': "import '../config.js';\nexport const z = 1;\n",
      'src/config.ts': 'export const c = 1;\n',
    });
    expect(await violations(root)).toEqual([]);
  });
});
