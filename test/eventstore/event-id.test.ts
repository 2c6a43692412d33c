import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deterministicEventId, groupedEventIds, orderedUuid } from '../../src/eventstore/event-id.js';

describe('time-ordered ids', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const at = (now: number) => {
    vi.setSystemTime(now);
    return orderedUuid();
  };

  it('are version 7 UUIDs that sort in the order they were made, also within one millisecond', () => {
    const ids = Array.from({ length: 5_000 }, () => at(1_800_000_000_000));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    // A clock that steps back does not break the order.
    expect(at(1_700_000_000_000) > ids.at(-1)!).toBe(true);
    expect(at(1_900_000_000_000).slice(0, 13)).toBe('01ba60d3-3800');
  });

  it('draw their random bits from a pool: cheap, and never the same bits twice in a row', () => {
    vi.setSystemTime(1_800_000_000_000);
    const ids = Array.from({ length: 600 }, () => orderedUuid());
    // The last 12 hex digits are random bytes of the id (the pool is refilled every 256 ids).
    expect(new Set(ids.map((id) => id.slice(-12))).size).toBe(ids.length);
  });
});

describe('deterministic ids', () => {
  it('are the same for the same name, forever: ids already stored must not change', () => {
    expect(deterministicEventId('dev-1/3EB0C0FFEE')).toBe('4b79a9bb-7816-5b57-ac96-986760366466');
    expect(deterministicEventId('shop-1/contacts/3/0/abc')).toBe('0368dae7-6b4c-5754-85a0-d2bb65f53a8f');
    expect(deterministicEventId('webhook-attempt:d-1:2')).toBe('427fccd0-1b36-5cf7-9335-280ed47101a9');
    expect(deterministicEventId('x')).toBe('bfaf1929-0fdc-522e-a05c-74f7f3c63692');
    expect(deterministicEventId('ünï/😀')).toBe('c2ac1035-5475-5830-80fb-ff6b903f93a8');
    // Lone surrogates (a name built from untrusted text) hash as U+FFFD, as they always did.
    expect(deterministicEventId('dev-1/\uD800')).toBe('6353474a-bfd7-525b-a2f1-bd0f190afbac');
    expect(deterministicEventId('a\uDC00b')).toBe('478c8555-7c91-574f-8543-0637b88d0a9c');
  });
});

describe('grouped deterministic ids', () => {
  it('are the same for the same group and name, forever, and the ids of one group sort side by side', () => {
    const s1 = groupedEventIds('dev-1/history/s1');
    // Ids already stored must not change: a chunk sent again after an upgrade would be recorded twice.
    expect(s1('message/A')).toBe('b6c123c9-81b4-5083-8d7a-35e3e6af034f');
    expect(s1('synced')).toBe('b6c123c9-81b4-5083-a0b1-77c1ffaa435b');
    expect(s1('message/A')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const first = Array.from({ length: 500 }, (_, i) => s1(`message/${i}`));
    const second = Array.from({ length: 500 }, (_, i) => groupedEventIds('dev-1/history/s2')(`message/${i}`));
    expect(new Set([...first, ...second]).size).toBe(1_000);
    const sorted = [...first, ...second].sort();
    const firstAt = sorted.indexOf([...first].sort()[0]);
    expect(sorted.slice(firstAt, firstAt + 500).sort()).toEqual([...first].sort());
  });
});
