/**
 * Keeps the documentation honest: README.md stays a five-minute read, every relative link in README.md and
 * docs/ reaches a file (and, with a #fragment, a heading of it), and docs/configuration.md documents exactly
 * the environment variables src/config.ts reads.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';

const ROOT = resolve(import.meta.dirname, '..');
const README_MAX_LINES = 150;

const read = (path: string) => readFileSync(path, 'utf8');

function markdownFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFilesUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/** Markdown without its fenced code blocks (a shell example is not markdown, and may name anything). */
function withoutCodeBlocks(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '');
}

/** The text outside code, where links are links. */
function proseOf(markdown: string): string {
  return withoutCodeBlocks(markdown).replace(/`[^`\n]*`/g, '');
}

/** The targets of inline links and images, `[text](target "title")`. */
function linkTargetsOf(markdown: string): string[] {
  return [...proseOf(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]);
}

/** The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces as dashes, repeats numbered. */
function headingAnchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const [, heading] of withoutCodeBlocks(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    let anchor = slug;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${slug}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** What is wrong with a relative link of `file`, or undefined when it resolves. */
function brokenLink(file: string, target: string): string | undefined {
  const [path = '', fragment] = target.split('#', 2);
  const destination = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
  if (!existsSync(destination)) return `${target}: no such file`;
  if (fragment === undefined || fragment === '') return undefined;
  if (statSync(destination).isDirectory() || !destination.endsWith('.md'))
    return `${target}: a fragment of a non-markdown target`;
  return headingAnchorsOf(read(destination)).has(decodeURIComponent(fragment).toLowerCase())
    ? undefined
    : `${target}: no heading #${fragment} in ${relative(ROOT, destination)}`;
}

/** The settings' source files: src/config.ts, and a src/config/ folder should the settings be split into one. */
function configSources(): string[] {
  const folder = join(ROOT, 'src', 'config');
  const files = existsSync(folder) ? readdirSync(folder, { recursive: true, encoding: 'utf8' }) : [];
  return [
    join(ROOT, 'src', 'config.ts'),
    ...files.filter((name) => name.endsWith('.ts')).map((name) => join(folder, name)),
  ].filter((path) => existsSync(path));
}

/**
 * The environment variables the settings' source reads, from its text: the names given to the env reader's
 * methods (`read.integer('PORT', …)`, `read.optionalDuration('messageTtlMs', 'OUTBOX_MESSAGE_TTL', …)`) and
 * those read from the environment directly (`env.GATEWAY_PROCESSES`, `process.env['X']`).
 */
function variablesReadBy(sources: string[]): Set<string> {
  const names = new Set<string>();
  const patterns = [
    /\bread\.\w+\(\s*(?:'[a-z][A-Za-z]*'\s*,\s*)?'([A-Z][A-Z0-9_]*)'/g,
    /\benv\.([A-Z][A-Z0-9_]*)\b/g,
    /\benv\[\s*'([A-Z][A-Z0-9_]*)'\s*\]/g,
  ];
  for (const source of sources) {
    const text = read(source);
    for (const pattern of patterns) for (const match of text.matchAll(pattern)) names.add(match[1]);
  }
  return names;
}

/** The variables loadConfig actually asks the environment for. */
function variablesAskedForByLoadConfig(): Set<string> {
  const asked = new Set<string>();
  const env = new Proxy(
    {},
    {
      get: (_target, name) => {
        if (typeof name === 'string') asked.add(name);
        return undefined;
      },
    },
  );
  loadConfig(env);
  return asked;
}

describe('README.md and docs/', () => {
  const readme = join(ROOT, 'README.md');
  const docs = markdownFilesUnder(join(ROOT, 'docs'));

  it(`README.md has at most ${README_MAX_LINES} lines`, () => {
    const lines = read(readme).split('\n').length - (read(readme).endsWith('\n') ? 1 : 0);
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('every relative link in README.md and docs/ resolves to a file (and its #heading)', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of [readme, ...docs]) {
      for (const target of linkTargetsOf(read(file))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        checked++;
        const problem = brokenLink(file, target);
        if (problem) broken.push(`${relative(ROOT, file)}: ${problem}`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(10);
  });

  describe('docs/configuration.md and src/config.ts', () => {
    const configuration = read(join(ROOT, 'docs', 'configuration.md'));
    /** The first column of the settings tables. */
    const documented = new Set([...configuration.matchAll(/^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|/gm)].map((m) => m[1]));
    const readByConfig = variablesReadBy(configSources());

    it('the source text names the variables loadConfig reads (the extraction misses none)', () => {
      expect(readByConfig.size).toBeGreaterThan(40);
      expect([...variablesAskedForByLoadConfig()].filter((name) => !readByConfig.has(name))).toEqual([]);
    });

    it('documents every variable src/config.ts reads, once', () => {
      expect([...readByConfig].filter((name) => !documented.has(name)).sort()).toEqual([]);
      const rows = [...configuration.matchAll(/^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|/gm)].map((m) => m[1]);
      expect(rows.length).toBe(documented.size);
    });

    it('names no variable that src/config.ts does not read', () => {
      const named = new Set(
        [...withoutCodeBlocks(configuration).matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{4,})`/g)].map((m) => m[1]),
      );
      expect([...named].filter((name) => !readByConfig.has(name)).sort()).toEqual([]);
    });
  });
});
