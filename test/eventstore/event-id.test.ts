import { describe, expect, it } from 'vitest';
import { orderedUuid } from '../../src/eventstore/event-id.js';

describe('time-ordered ids', () => {
  it('are version 7 UUIDs that sort in the order they were made, also within one millisecond', () => {
    const ids = Array.from({ length: 5_000 }, () => orderedUuid(1_800_000_000_000));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    // A clock that steps back does not break the order.
    expect(orderedUuid(1_700_000_000_000) > ids.at(-1)!).toBe(true);
    expect(orderedUuid(1_900_000_000_000).slice(0, 13)).toBe('01ba60d3-3800');
  });
});
