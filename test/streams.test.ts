/**
 * The registry of streams (src/streams.ts) and docs/architecture.md's table of streams say the same: the same
 * prefixes, each with the same events, the events' file, and its decider and writer named with their files;
 * and every file the registry names exists and exports what it is said to.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STREAMS } from '../src/streams.js';

interface TableRow {
  prefix: string;
  events: string;
  decider: string;
  writer: string;
}

/** The rows of the table under "## Streams, their deciders, writers and read models". */
function streamsTable(): TableRow[] {
  const page = readFileSync(resolve('docs/architecture.md'), 'utf8');
  const section = page.slice(page.indexOf('## Streams, their deciders, writers and read models'));
  const lines = section.split('\n');
  const start = lines.findIndex((line) => line.startsWith('| stream |'));
  const rows: TableRow[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const [stream, events, decider, writer] = line
      .split('|')
      .slice(1, 5)
      .map((cell) => cell.trim());
    const prefix = /^`([a-z-]+-)<[a-zA-Z]+>`$/.exec(stream)?.[1];
    if (!prefix) throw new Error(`a row of the streams table names no stream: ${line}`);
    rows.push({ prefix, events: events, decider: decider, writer: writer });
  }
  return rows;
}

/** The event types a cell lists: the names before its first parenthesis. */
const eventTypesOf = (cell: string) =>
  new Set(
    cell
      .split('(')[0]
      .split(',')
      .map((name) => name.trim()),
  );

/** The cell names the export in code (`name`, `name.member` or `name(…)`) and its file. */
function namesDeclared(cell: string, declared: { file: string; name: string }): void {
  expect(cell).toContain(`\`${declared.file}\``);
  expect(cell).toMatch(new RegExp('`' + declared.name + '[`.(]'));
}

describe('the registry of streams', () => {
  const table = streamsTable();

  it('has the prefixes of the table, in its order', () => {
    expect(STREAMS.map((kind) => kind.prefix)).toEqual(table.map((row) => row.prefix));
  });

  it('makes each stream name of its prefix', () => {
    for (const kind of STREAMS) expect(kind.stream('x1')).toBe(`${kind.prefix}x1`);
  });

  it.each(STREAMS.map((kind) => [kind.prefix, kind] as const))(
    '%s: events, decider and writer as the table says',
    (prefix, kind) => {
      const row = table.find((candidate) => candidate.prefix === prefix)!;
      expect(eventTypesOf(row.events)).toEqual(new Set(kind.eventTypes));
      expect(row.events).toContain(`\`${kind.eventsFile}\``);
      namesDeclared(row.decider, kind.decider);
      namesDeclared(row.writer, kind.writer);
    },
  );

  it.each(STREAMS.map((kind) => [kind.prefix, kind] as const))(
    '%s: every file named exists and exports what it is said to',
    async (_prefix, kind) => {
      expect(existsSync(resolve(kind.eventsFile)), kind.eventsFile).toBe(true);
      for (const declared of [kind.decider, kind.writer]) {
        const module = (await import(resolve(declared.file))) as Record<string, unknown>;
        expect(module[declared.name], `${declared.file} exports ${declared.name}`).toBe(declared.value);
      }
    },
  );

  // One naming pattern: `<Stream>Commands`, or `create<Stream>Commands` for a plain command handler. The writers
  // named otherwise are more than a writer (the outbox's pipelined executor, the lease and request protocols of
  // the cluster, the watchdog, the ticket issuer): their names say that.
  const NAMED_FOR_MORE = new Set(['DeviceOutbox', 'DeviceLeases', 'SessionRequests', 'Watchdog', 'StreamTickets']);
  it.each(STREAMS.map((kind) => [kind.prefix, kind.writer.name] as const))(
    '%s: its writer is named <Stream>Commands (%s)',
    (_prefix, name) => {
      if (!NAMED_FOR_MORE.has(name)) expect(name).toMatch(/^(create)?[A-Z][A-Za-z]*Commands$/);
    },
  );
});
