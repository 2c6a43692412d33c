/**
 * Fingerprints of source modules with what they import: a module and every file under src/ it imports at run
 * time (relative imports, followed transitively), each transpiled without comments and printed again from its
 * syntax tree, hashed together. Comment-only, type-only and layout-only edits leave a fingerprint as it was; an
 * edit to code that runs changes it. test/projections/read-model-fingerprints.test.ts keeps one per read model.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository's root directory. */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../..', import.meta.url));

const SOURCE_ROOT = join(REPOSITORY_ROOT, 'src');

const TRANSPILE_OPTIONS: ts.CompilerOptions = {
  module: ts.ModuleKind.ESNext,
  target: ts.ScriptTarget.ES2022,
  removeComments: true,
};

export interface ModuleFingerprint {
  /** Repository-relative paths (with `/`) of the files hashed, sorted. */
  files: string[];
  /** sha256, hex. */
  fingerprint: string;
}

/** A path relative to the repository root, with `/` on every platform. */
export const repositoryPath = (path: string): string => relative(REPOSITORY_ROOT, path).split(sep).join('/');

const transpiled = new Map<string, string>();

/**
 * The JavaScript a file runs as: TypeScript transpiled without comments and types (an import whose names
 * serve only as types is dropped with them). Other files (JSON) are taken as they are.
 */
function runtimeCode(path: string): string {
  let code = transpiled.get(path);
  if (code === undefined) {
    const source = readFileSync(path, 'utf8');
    code = path.endsWith('.ts')
      ? ts.transpileModule(source, { compilerOptions: TRANSPILE_OPTIONS, fileName: path }).outputText
      : source;
    transpiled.set(path, code);
  }
  return code;
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/**
 * What a file's fingerprint hashes: its run-time code printed again from its syntax tree, so that layout
 * (indentation, line breaks, blank lines) does not count and the text of string literals (SQL, JSON keys) does.
 */
export function normalizedCode(path: string): string {
  const code = runtimeCode(path);
  if (!path.endsWith('.ts')) return code;
  let printed = normalized.get(path);
  if (printed === undefined) {
    printed = printer.printFile(ts.createSourceFile(path, code, ts.ScriptTarget.ES2022, false, ts.ScriptKind.JS));
    normalized.set(path, printed);
  }
  return printed;
}

/** Read models share most of their files: each file is printed and its imports are read once per run. */
const normalized = new Map<string, string>();
const importsOf = new Map<string, string[]>();

/** The module specifiers a piece of JavaScript imports: static imports, re-exports and `import('…')` calls. */
function importedSpecifiers(code: string, fileName: string): string[] {
  const file = ts.createSourceFile(fileName, code, ts.ScriptTarget.ES2022, false, ts.ScriptKind.JS);
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteralLike(argument)) specifiers.push(argument.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return specifiers;
}

/** The file a relative specifier names: `./x.js` is `./x.ts` in the sources. */
function resolveRelative(from: string, specifier: string): string {
  const target = resolve(dirname(from), specifier);
  const candidates = specifier.endsWith('.js') ? [`${target.slice(0, -'.js'.length)}.ts`, target] : [target];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found)
    throw new Error(
      `${repositoryPath(from)} imports '${specifier}', which is no file (looked for ${candidates.map(repositoryPath).join(', ')})`,
    );
  return found;
}

/**
 * `entries` (absolute paths) and every file under src/ they import at run time, transitively; packages
 * (bare specifiers, `node:` modules) and files outside src/ are not followed. Absolute paths, sorted.
 */
export function runtimeClosure(entries: readonly string[]): string[] {
  const seen = new Set<string>();
  const pending = [...entries];
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    if (seen.has(path)) continue;
    seen.add(path);
    if (!path.endsWith('.ts')) continue;
    let specifiers = importsOf.get(path);
    if (specifiers === undefined) {
      specifiers = importedSpecifiers(runtimeCode(path), path);
      importsOf.set(path, specifiers);
    }
    for (const specifier of specifiers) {
      if (!specifier.startsWith('./') && !specifier.startsWith('../')) continue;
      const target = resolveRelative(path, specifier);
      if (target.startsWith(SOURCE_ROOT + sep) && !seen.has(target)) pending.push(target);
    }
  }
  return [...seen].sort();
}

/** The fingerprint of `entries` (absolute paths) with everything they import under src/. */
export function fingerprintModules(entries: readonly string[]): ModuleFingerprint {
  const files = runtimeClosure(entries)
    .map((path) => ({ path, name: repositoryPath(path) }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const hash = createHash('sha256');
  // Each part is prefixed by its length, so that no two lists of (path, code) hash the same bytes.
  for (const { path, name } of files) {
    for (const part of [name, normalizedCode(path)]) {
      const bytes = Buffer.from(part, 'utf8');
      hash.update(`${bytes.length}:`);
      hash.update(bytes);
    }
  }
  return { files: files.map((file) => file.name), fingerprint: hash.digest('hex') };
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every `export class <Name>` under src/: the files (absolute paths) that declare a class of each name. */
export function exportedClasses(): Map<string, string[]> {
  const classes = new Map<string, string[]>();
  for (const path of sourceFiles(SOURCE_ROOT)) {
    for (const match of readFileSync(path, 'utf8').matchAll(/^export\s+(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)/gm)) {
      const name = match[1];
      classes.set(name, [...(classes.get(name) ?? []), path]);
    }
  }
  return classes;
}
