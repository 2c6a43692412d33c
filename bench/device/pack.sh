#!/usr/bin/env bash
# Packs what the library's 16-core device machine needs to run the benches (it has no Node and no network):
# this machine's Node binary and the production dependencies plus tsx and autocannon, each xz-compressed, into
# .device/ (git-ignored: add `/.device/` to .git/info/exclude). About 42 MB together; a run carries `.device`.
# See bench/device/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .device
# Every package the gateway needs at run time, and tsx and autocannon with theirs, from package-lock.json.
node --input-type=module -e '
import { readFileSync } from "node:fs";
const { packages } = JSON.parse(readFileSync("package-lock.json", "utf8"));
const keep = new Set();
const resolve = (from, name) => {
  for (let base = from; ; ) {
    const path = (base ? base + "/" : "") + "node_modules/" + name;
    if (packages[path]) return path;
    if (!base) return undefined;
    const cut = base.lastIndexOf("/node_modules/");
    base = cut < 0 ? "" : base.slice(0, cut);
  }
};
const visit = (path) => {
  if (!path || keep.has(path)) return;
  keep.add(path);
  const entry = packages[path];
  for (const name of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies }))
    visit(resolve(path, name));
};
for (const name of [...Object.keys(packages[""].dependencies), "tsx", "autocannon"]) visit(resolve("", name));
console.log([...keep].join("\n"));
' > .device/packages.txt
# Sources, build leftovers, maps and type declarations are not needed to run.
tar -cf - --ignore-failed-read \
  --exclude='node_modules/better-sqlite3/deps' --exclude='node_modules/better-sqlite3/src' \
  --exclude='node_modules/better-sqlite3/build/Release/obj*' --exclude='node_modules/better-sqlite3/build/deps' \
  --exclude='node_modules/better-sqlite3/build/Release/sqlite3.a' \
  --exclude='node_modules/better-sqlite3/build/Release/test_extension.node' \
  --exclude='*.map' --exclude='*.d.ts' --exclude='*.d.mts' --exclude='*.d.cts' --exclude='*.md' \
  -T .device/packages.txt 2>/dev/null | xz -T0 -6 > .device/modules.tar.xz
[ -f .device/node.xz ] || xz -T0 -9 -c "$(readlink -f "$(command -v node)")" > .device/node.xz
# npm ci builds better-sqlite3 from source here (no prebuilt binary can be fetched): packed before that build ends,
# the archive lacks the addon and every gateway on the device machine fails to start.
# (Listed to a file first: `grep -q` ends the pipe early, and under pipefail tar's SIGPIPE failed the check.)
tar -tJf .device/modules.tar.xz > .device/modules.list
grep -q 'better-sqlite3/build/Release/better_sqlite3.node$' .device/modules.list ||
  { echo 'better_sqlite3.node is missing: wait for npm ci to finish, then pack again' >&2; rm .device/modules.tar.xz; exit 1; }
ls -la .device
