/** The sandbox phone's own history of a chat, given on demand: made from the request alone, and none before 2009. */
import { describe, expect, it } from 'vitest';
import { olderHistory } from '../../../src/engines/sandbox/sandbox-history.js';

const ME = '4915100000001';
const BOB = '4915100000002';
const GROUP = '120363000000000099@g.us';
const oldest = { waMessageId: 'M1', fromMe: false, timestamp: 1_700_000_000 };

describe('sandbox phone history', () => {
  it('gives the same messages with the same ids for the same request (recorded once), others for another', () => {
    const chunk = olderHistory(BOB, 4, oldest, ME);
    expect(olderHistory(BOB, 4, oldest, ME)).toEqual(chunk);
    expect(chunk).toMatchObject({ chats: [{ chatId: BOB }], progress: 100, final: true });
    expect(chunk.messages.map((m) => [m.timestamp, m.from, m.fromMe ?? false])).toEqual([
      [1_699_999_940, BOB, false],
      [1_699_999_880, ME, true],
      [1_699_999_820, BOB, false],
      [1_699_999_760, ME, true],
    ]);
    expect(new Set(chunk.messages.map((m) => m.waMessageId)).size).toBe(4);
    const other = olderHistory(BOB, 4, { ...oldest, waMessageId: 'M0', timestamp: 1_699_999_760 }, ME);
    expect(other.syncId).not.toBe(chunk.syncId);
  });

  it("a group's messages come from its members in turn, the account's own left out of them", () => {
    const chunk = olderHistory(GROUP, 5, oldest, ME, [ME, BOB, '4915100000003']);
    expect(chunk.messages.map((m) => [m.from, m.participant])).toEqual([
      [BOB, BOB],
      [ME, undefined],
      ['4915100000003', '4915100000003'],
      [ME, undefined],
      [BOB, BOB],
    ]);
    expect(chunk.messages.every((m) => m.isGroup)).toBe(true);
  });

  it('has nothing older than 2009: a request there is answered with an empty chunk', () => {
    const early = { waMessageId: 'E1', fromMe: true, timestamp: 1_230_768_100 };
    expect(olderHistory(BOB, 10, early, ME).messages.map((m) => m.timestamp)).toEqual([1_230_768_040]);
    expect(olderHistory(BOB, 10, { ...early, timestamp: 1_230_768_000 }, ME).messages).toEqual([]);
  });
});
