/** The rows a projection changes per batch, and those it keeps between batches. */
import { describe, expect, it } from 'vitest';
import { RowBuffer } from '../../src/projections/row-buffer.js';

interface Row {
  id: string;
  n: number;
}

function table() {
  const rows = new Map<string, Row>([['a', { id: 'a', n: 1 }]]);
  const loads: string[] = [];
  const writes: string[] = [];
  const load = (key: string) => {
    loads.push(key);
    const row = rows.get(key);
    return row && { ...row };
  };
  const write = (row: Row, stored: boolean) => {
    writes.push(`${stored ? 'update' : 'insert'} ${row.id}=${row.n}`);
    rows.set(row.id, { ...row });
  };
  return { rows, loads, writes, load, write };
}

describe('row buffer', () => {
  it('writes each changed row once per batch, and without keep reads it again in the next batch', () => {
    const t = table();
    const buffer = new RowBuffer<Row>(t.load, t.write);
    for (let i = 0; i < 3; i++) {
      const row = buffer.get('a')!;
      row.n += 1;
      buffer.put('a', row);
    }
    buffer.put('b', { id: 'b', n: 7 });
    buffer.flush();
    expect(t.writes).toEqual(['update a=4', 'insert b=7']);
    buffer.get('a');
    expect(t.loads).toEqual(['a', 'a']);
  });

  it('with keep, finds the rows of earlier batches in memory (updated as written), up to the limit', () => {
    const t = table();
    const buffer = new RowBuffer<Row>(t.load, t.write, 2);
    buffer.put('b', { id: 'b', n: 1 });
    buffer.flush();
    const b = buffer.get('b')!;
    b.n = 2;
    buffer.put('b', b);
    buffer.flush();
    // b was inserted once, then updated (not inserted again), and never read back from the table.
    expect(t.writes).toEqual(['insert b=1', 'update b=2']);
    expect(t.loads).toEqual([]);
    // An unchanged batch writes nothing.
    buffer.get('b');
    buffer.flush();
    expect(t.writes).toHaveLength(2);
    // Beyond the limit the least recently used go: b (used last) stays, a new c pushes out nothing else.
    buffer.get('a');
    buffer.put('c', { id: 'c', n: 3 });
    buffer.get('b');
    buffer.flush();
    buffer.get('b');
    buffer.get('c');
    buffer.get('a');
    expect(t.loads).toEqual(['a', 'a']);
  });

  it('putOnce writes a row at the end of its batch and keeps nothing of it, whatever keep allows', () => {
    const t = table();
    const buffer = new RowBuffer<Row>(t.load, t.write, 10, true);
    buffer.get('a');
    for (let i = 0; i < 5; i++) {
      expect(buffer.get(`h${i}`)).toBeUndefined();
      buffer.putOnce(`h${i}`, { id: `h${i}`, n: i });
    }
    expect(buffer.size).toBe(6);
    buffer.flush();
    expect(t.writes).toEqual(['insert h0=0', 'insert h1=1', 'insert h2=2', 'insert h3=3', 'insert h4=4']);
    // Only the row kept as usual stays; one written once is read back from the table when touched again.
    expect(buffer.size).toBe(1);
    const h2 = buffer.get('h2')!;
    h2.n = 20;
    buffer.put('h2', h2);
    buffer.flush();
    expect(t.writes.at(-1)).toBe('update h2=20');
    expect(t.loads).toEqual(['a', 'h0', 'h1', 'h2', 'h3', 'h4', 'h2']);
    expect(buffer.size).toBe(2);
  });

  it('forgets everything a rolled-back batch touched, also what it kept', () => {
    const t = table();
    const buffer = new RowBuffer<Row>(t.load, t.write, 10);
    buffer.get('a');
    buffer.flush();
    const a = buffer.get('a')!;
    a.n = 99;
    buffer.put('a', a);
    buffer.discard();
    expect(buffer.get('a')).toEqual({ id: 'a', n: 1 });
    expect(t.writes).toEqual([]);
  });

  it('with snapshots, write() gets the row as stored (loaded or last written), so an update can set only what changed', () => {
    const t = table();
    const saved: Array<Row | undefined> = [];
    const buffer = new RowBuffer<Row>(
      t.load,
      (row, stored, before) => {
        saved.push(before && { ...before });
        t.write(row, stored);
      },
      10,
      true,
    );
    const a = buffer.get('a')!;
    a.n = 2;
    buffer.put('a', a);
    buffer.put('b', { id: 'b', n: 5 });
    buffer.flush();
    a.n = 3;
    buffer.put('a', a);
    buffer.flush();
    expect(t.writes).toEqual(['update a=2', 'insert b=5', 'update a=3']);
    expect(saved).toEqual([{ id: 'a', n: 1 }, undefined, { id: 'a', n: 2 }]);
  });

  it('with snapshots, copies at a flush only the rows it keeps, not those it pushes out', () => {
    let copies = 0;
    // A row whose copy is seen: spreading it reads its getter.
    const counted = (id: string): Row => ({
      id,
      get n() {
        copies++;
        return 1;
      },
    });
    const saved: Array<Row | undefined> = [];
    const buffer = new RowBuffer<Row>(
      () => undefined,
      (_row, _stored, before) => saved.push(before),
      1,
      true,
    );
    for (const id of ['a', 'b', 'c']) buffer.put(id, counted(id));
    buffer.flush();
    expect(copies).toBe(1);
    // The one kept (c, put last) is updated against its copy as written.
    buffer.put('c', { id: 'c', n: 2 });
    buffer.flush();
    expect(saved).toEqual([undefined, undefined, undefined, { id: 'c', n: 1 }]);
  });

  it('after emptied(), looks up only the keys it wrote since (and every key again after caughtUp())', () => {
    const t = table();
    t.rows.clear(); // the table was emptied for a rebuild
    const buffer = new RowBuffer<Row>(t.load, t.write, 1);
    buffer.emptied();
    expect(buffer.get('a')).toBeUndefined();
    buffer.put('a', { id: 'a', n: 1 });
    buffer.put('b', { id: 'b', n: 1 });
    buffer.flush();
    // b stays in memory (keep 1); a was pushed out and is read back from the table, once.
    const a = buffer.get('a')!;
    a.n = 2;
    buffer.put('a', a);
    buffer.flush();
    expect(buffer.get('c')).toBeUndefined();
    expect(t.loads).toEqual(['a']);
    expect(t.writes).toEqual(['insert a=1', 'insert b=1', 'update a=2']);
    buffer.caughtUp();
    buffer.get('d');
    expect(t.loads).toEqual(['a', 'd']);
  });
});
