/**
 * The test layout of docs/development.md ("Tests"), held to the files: a test file that starts a gateway is named
 * `*.e2e.test.ts` and one that starts none is not (the `unit` project is every file but those), helpers live in
 * a `support/` folder and are not named `*.test.ts`, `eventually` is the one polling helper, the fixed waits left
 * are those the docs list, and a test file named anywhere exists (a rename or a move leaves no stale path behind).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import config from '../vitest.config.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** This file names the patterns it looks for. */
const SELF = 'test/test-layout.test.ts';

/** The helpers that start a gateway, in process or as a child, with the functions that do. */
const GATEWAY_STARTERS: Record<string, string[]> = {
  'test/support/gateway.ts': ['startTestGateway'],
  'test/support/child-gateway.ts': ['spawnGateway'],
  'test/support/sandbox-world.ts': ['useSandboxWorld'],
  'test/chats/support/history-world.ts': ['useHistoryWorld'],
  'test/contacts/support/contacts-gateway.ts': ['startContactsGateway'],
  'test/engines/baileys/support/fake-socket-gateway.ts': ['useFakeSocketGateway'],
  'test/webhooks/support/spawn-injectable.ts': ['spawnInjectableGateway'],
  'test/cluster/support/esdb-cluster-gateways.ts': ['startEsdbClusterGateways'],
  'test/webhooks/support/injectable-gateway.ts': [], // the child's script itself, started by spawnInjectableGateway
  'bench/lib/chaos.ts': ['runChaos'],
  'bench/lib/child.ts': ['spawnGateway', 'spawnGateways'],
  'bench/lib/served-data-dir.ts': ['serveDataDir'],
};
/** src/gateway.ts's startGateway, or src/main.ts started as a process. */
const STARTS_DIRECTLY = /\bstartGateway\(|['"]src\/main\.ts['"]/;
const STARTS = new RegExp(
  `${STARTS_DIRECTLY.source}|\\b(${[...new Set(Object.values(GATEWAY_STARTERS).flat())].join('|')})\\(`,
);

function filesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .sort();
}

function markdownUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

const source = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const testFiles = filesUnder('test').filter((path) => path.endsWith('.test.ts') && path !== SELF);
/** vitest.config.ts's projects, as far as this file reads them. */
const projects = (config.test?.projects ?? []) as Array<{
  test: { name: string; include?: string[]; exclude?: string[]; isolate?: boolean };
}>;
const project = (name: string) => projects.find((each) => each.test.name === name)!.test;
const helpers = [...filesUnder('test'), ...filesUnder('bench/lib')].filter((path) => !path.endsWith('.test.ts'));

describe('test layout', () => {
  it('names a test file *.e2e.test.ts exactly when it starts a gateway', () => {
    const misnamed = testFiles.filter((path) => STARTS.test(source(path)) !== path.endsWith('.e2e.test.ts'));
    expect(misnamed).toEqual([]);
    expect(testFiles.filter((path) => path.endsWith('.e2e.test.ts')).length).toBeGreaterThan(0);
  });

  it('knows every helper that starts a gateway', () => {
    const starters = helpers.filter((path) => STARTS.test(source(path)));
    expect(starters.sort()).toEqual(Object.keys(GATEWAY_STARTERS).sort());
    for (const [path, names] of Object.entries(GATEWAY_STARTERS))
      for (const name of names) expect(source(path), path).toMatch(new RegExp(`export (async )?function ${name}\\b`));
  });

  it('keeps helpers in a support/ folder, and none of them named *.test.ts', () => {
    const testHelpers = helpers.filter((path) => path.startsWith('test/'));
    expect(testHelpers.filter((path) => !path.split('/').includes('support'))).toEqual([]);
    expect(testFiles.filter((path) => path.split('/').includes('support'))).toEqual([]);
  });

  it('names only test files that exist, in the code, the docs and the tests', () => {
    const places = [
      ...filesUnder('src'),
      ...filesUnder('bench').filter((path) => !path.startsWith('bench/results/')),
      ...filesUnder('test').filter((path) => path !== SELF),
      ...markdownUnder('docs'),
      'README.md',
      'bench/README.md',
      'vitest.config.ts',
      'docker-compose.yml',
    ];
    const missing = places.flatMap((place) =>
      [...source(place).matchAll(/\btest\/[\w./-]+\.test\.ts\b/g)]
        .map(([named]) => named)
        .filter((named) => !named.startsWith('test/x/') && !existsSync(join(ROOT, named)))
        .map((named) => `${place}: ${named}`),
    );
    expect(missing).toEqual([]);
  });

  it("runs a file that replaces a module (vi.mock) with a module graph of its own, every other in its worker's", () => {
    const replacing = testFiles.filter((path) => /\bvi\.(mock|doMock|unmock|doUnmock)\(/.test(source(path))).sort();
    expect(replacing.length).toBeGreaterThan(0);
    // Root: a worker runs several files; a project that isolates still gets fresh modules for each file.
    expect(config.test?.isolate).toBe(false);
    expect(project('sqlite-isolated')).toMatchObject({ include: replacing, isolate: true });
    expect(project('unit-isolated')).toMatchObject({ include: replacing, isolate: true });
    for (const name of ['sqlite', 'unit']) {
      expect(project(name).isolate, name).toBeUndefined();
      expect(project(name).exclude, name).toEqual(expect.arrayContaining(replacing));
    }
    expect(project('esdb').include!.filter((path) => replacing.includes(path))).toEqual([]);
  });

  it("lists every fixed wait left in a test file in docs/development.md's table, and only those", () => {
    // A real timer in a test (a clock's, `clock.setTimeout`, is not one); support/ files are the helpers' own.
    const waiting = testFiles.filter((path) => /(?<![.\w])setTimeout\(|timers\/promises/.test(source(path)));
    const table = /\| file \| the wait \| why \|[\s\S]*?\n\n/.exec(source('docs/development.md'))?.[0] ?? '';
    const listed = new Set([...table.matchAll(/`(test\/[\w./-]+\.test\.ts)`/g)].map(([, path]) => path));
    expect(waiting.sort()).toEqual([...listed].sort());
  });

  it('has one eventually, and no vi.waitFor beside it', () => {
    const all = [...testFiles, ...helpers.filter((path) => path.startsWith('test/'))];
    expect(all.filter((path) => /function eventually\b|const eventually\b/.test(source(path)))).toEqual([
      'test/support/eventually.ts',
    ]);
    expect(all.filter((path) => /\bvi\.wait(For|Until)\(/.test(source(path)))).toEqual([]);
    // A loop of its own (`until`, `waitUntil`) is another eventually.
    expect(all.filter((path) => /function (until|waitUntil|poll)\b/.test(source(path)))).toEqual([]);
  });

  it('runs the gateway and its commands in a child process without blocking the test worker (runToEnd, not spawnSync)', () => {
    // A synchronous child stops the worker's event loop for its whole life: vitest's calls to the runner waiting
    // meanwhile time out after 60 s and fail the run though every test passed (test/support/processes.ts).
    const all = [...testFiles, ...helpers.filter((path) => path.startsWith('test/'))];
    expect(
      all.filter((path) => /\b(spawnSync|execFileSync|execSync)\(\s*process\.execPath/.test(source(path))),
    ).toEqual([]);
  });
});
