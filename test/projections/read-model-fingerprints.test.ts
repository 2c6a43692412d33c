/**
 * A read model whose code changed keeps its version only if the rows it writes did not change: the runner
 * rebuilds a read model from position 0 only when its stored version differs from the code's, so a file
 * written by the old code would otherwise keep the old rows beside the new ones, and a rebuild would no
 * longer give the same result.
 *
 * Every projection of `allProjections` (the parts of a combined one each on its own) has its version and
 * the fingerprint of its code (test/support/module-fingerprint.ts: its class's file, the upcasters in
 * src/event-schemas.ts, and every file under src/ they import at run time) recorded in read-model-fingerprints.json beside this file. A fingerprint
 * that changed under the recorded version fails, as does a read model recorded under another version, one
 * not recorded, or a recorded one that is gone. UPDATE_READ_MODEL_FINGERPRINTS=1 records what the code is.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { CombinedProjection } from '../../src/outbox/read-models/sending-projection.js';
import type { Projection } from '../../src/projections/projection.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { allProjections } from '../../src/read-models.js';
import { REPOSITORY_ROOT, exportedClasses, fingerprintModules, repositoryPath } from '../support/module-fingerprint.js';
import { tempDir } from '../support/temp-dir.js';

const RECORDED_FILE = 'test/projections/read-model-fingerprints.json';
const UPDATE_VARIABLE = 'UPDATE_READ_MODEL_FINGERPRINTS';
/** The upcasters every event passes before a read model sees it (src/event-schemas.ts and what it imports). */
const UPCASTERS_FILE = join(REPOSITORY_ROOT, 'src', 'event-schemas.ts');
const UPDATE_COMMAND = `${UPDATE_VARIABLE}=1 npx vitest run --project sqlite test/projections/read-model-fingerprints.test.ts`;

interface Recorded {
  version: number;
  fingerprint: string;
}

interface ReadModelCode {
  name: string;
  version: number;
  /** The file that declares its class (repository-relative): where its version is. */
  source: string;
  /** The combined projection it is a part of, which the runner feeds and checkpoints. */
  partOf?: string;
  files: string[];
  fingerprint: string;
}

/** The projections the runners feed, each part of a combined projection on its own, with the file of its class. */
async function projectionClasses(): Promise<Array<{ projection: Projection; classes: string[]; partOf?: string }>> {
  const dir = tempDir('dmg-fingerprints-');
  const db = openReadModelDb(dir);
  const store = new SqliteEventStore(join(dir, 'events.sqlite'));
  try {
    return allProjections(db, store, pino({ level: 'silent' })).flatMap((projection) => {
      if (!(projection instanceof CombinedProjection)) return [{ projection, classes: [projection.constructor.name] }];
      // A combined projection's version is made of its parts' versions: each part's code is checked against
      // its own version, together with the combined class that feeds it.
      const { parts } = projection as unknown as { parts: readonly Projection[] };
      return parts.map((part) => ({
        projection: part,
        classes: [part.constructor.name, projection.constructor.name],
        partOf: projection.name,
      }));
    });
  } finally {
    db.close();
    await store.close();
  }
}

async function currentReadModels(): Promise<ReadModelCode[]> {
  const classes = exportedClasses();
  const fileOf = (name: string): string => {
    const files = classes.get(name) ?? [];
    if (files.length !== 1) {
      throw new Error(
        files.length === 0
          ? `no file under src/ declares \`export class ${name}\`, the class of a read model of allProjections`
          : `several files under src/ declare \`export class ${name}\`: ${files.map(repositoryPath).join(', ')}`,
      );
    }
    return files[0];
  };
  const models = (await projectionClasses()).map(({ projection, classes: names, partOf }) => {
    const entries = names.map(fileOf);
    return {
      name: projection.name,
      version: projection.version,
      source: repositoryPath(entries[0]),
      ...(partOf === undefined ? {} : { partOf }),
      // Every read model is fed through the upcasters: an upcaster that changes changes what they write.
      ...fingerprintModules([...entries, UPCASTERS_FILE]),
    };
  });
  const names = models.map((model) => model.name);
  const repeated = names.filter((name, index) => names.indexOf(name) !== index);
  if (repeated.length > 0) throw new Error(`several read models are named ${repeated.join(', ')}`);
  return models;
}

function readRecorded(): Record<string, Recorded> {
  try {
    return JSON.parse(readFileSync(join(REPOSITORY_ROOT, RECORDED_FILE), 'utf8')) as Record<string, Recorded>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
}

function writeRecorded(models: readonly ReadModelCode[]): void {
  const sorted = [...models].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const recorded = Object.fromEntries(
    sorted.map((model) => [model.name, { version: model.version, fingerprint: model.fingerprint }]),
  );
  writeFileSync(join(REPOSITORY_ROOT, RECORDED_FILE), `${JSON.stringify(recorded, null, 2)}\n`);
}

/** The way out of every mismatch but a changed fingerprint under the same version. */
const record = `rewrite ${RECORDED_FILE} from the code by running\n    ${UPDATE_COMMAND}\n  and commit it.`;

function fileList(model: ReadModelCode): string {
  return model.files.map((file) => `      ${file}`).join('\n');
}

function changedUnderSameVersion(model: ReadModelCode): string {
  const rebuilt =
    model.partOf === undefined
      ? 'rebuilds it from position 0 on upgrade'
      : `rebuilds \`${model.partOf}\`, the combined projection it is a part of, from position 0 on upgrade`;
  return [
    `Read model \`${model.name}\` changed but its version did not: its code is not what ${RECORDED_FILE} recorded for version ${model.version}.`,
    `  Its fingerprint covers these files (its class, the upcasters of src/event-schemas.ts, and every file under src/ they import at run time; comments, types and layout do not count):`,
    fileList(model),
    `  Two ways out:`,
    `  - the rows it writes changed (its tables, setup/apply/flush, or a helper they call): bump \`version\` in ${model.source}`,
    `    (the projection runner then ${rebuilt}), and record the new version and fingerprint by running`,
    `      ${UPDATE_COMMAND}`,
    `  - it writes exactly the same rows as before (a refactor, or a change to its queries only): keep the version and record`,
    `    the new fingerprint by running the same command.`,
    `  Commit ${RECORDED_FILE} with the change.`,
  ].join('\n');
}

function problemsOf(models: readonly ReadModelCode[], recorded: Record<string, Recorded>): string[] {
  const problems: string[] = [];
  for (const model of models) {
    const entry = recorded[model.name];
    if (!entry) {
      problems.push(
        `Read model \`${model.name}\` (${model.source}, version ${model.version}) has no fingerprint recorded: ${record}`,
      );
    } else if (entry.version !== model.version) {
      problems.push(
        `Read model \`${model.name}\` is version ${model.version} in ${model.source}, ${RECORDED_FILE} records version ${entry.version}` +
          `${entry.fingerprint === model.fingerprint ? '' : ' and another fingerprint'}: the recorded version (and fingerprint) moves with a version bump;\n  ${record}`,
      );
    } else if (entry.fingerprint !== model.fingerprint) {
      problems.push(changedUnderSameVersion(model));
    }
  }
  const current = new Set(models.map((model) => model.name));
  for (const name of Object.keys(recorded)) {
    if (!current.has(name)) {
      problems.push(
        `${RECORDED_FILE} records \`${name}\`, which is no read model of allProjections (src/read-models.ts) any more: ${record}`,
      );
    }
  }
  return problems;
}

describe('read-model versions', () => {
  it('a read model whose code changed has a new version, or its new fingerprint recorded', async () => {
    const models = await currentReadModels();
    expect(models.length).toBeGreaterThan(0);
    if (process.env[UPDATE_VARIABLE] === '1') {
      writeRecorded(models);
      return;
    }
    const problems = problemsOf(models, readRecorded());
    if (problems.length > 0) throw new Error(`\n${problems.join('\n\n')}\n`);
  });
});
