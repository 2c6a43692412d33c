/**
 * A search in one chat (`GET /messages?q=&chatId=`), at a cost bounded by the cheaper of two walks. The index's
 * walk reads the words' hits newest first and keeps the chat's: a common word in a small chat passes the hits of
 * every other chat first. The chat's walk reads the chat's messages newest first and asks the index whether each
 * one matches: a rare word in a large chat asks about every message first. Neither is cheap for every query, so
 * both run by turns, in pieces that double, and the first to fill the page (or to reach its end) answers: hits in
 * the same order as a search of every chat, by search key (message-search-keys.ts).
 */
import type Database from 'better-sqlite3';
import { searchBlockOf, searchBlockRange } from './message-search-keys.js';

/** The first piece of each walk: hits read from the index, messages of the chat (each an index look-up). */
const FIRST_HITS = 2_048;
const FIRST_MESSAGES = 128;
/** Above every key (FTS5 seeks to an integer bound: message-index-queries.ts). */
const NO_BOUND = 2n ** 63n - 1n;

export interface ChatSearchQuery {
  deviceId: string;
  chatId: string;
  /** The FTS5 MATCH expression (message-search-match.ts). */
  match: string;
  /** Keys below this only (a later page), or undefined for the first. */
  below: bigint | undefined;
  /** Messages recorded before the chat was cleared are left out. */
  cleared: { at: number; pos: number };
  /** Hits wanted (a page and one more, to know there is a next). */
  count: number;
}

interface Hit {
  key: number;
  pos: number;
}

export class ChatSearch {
  private statements: ReturnType<ChatSearch['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  /** The positions of the chat's first `count` hits, newest first by key. */
  positions(query: ChatSearchQuery): number[] {
    const byIndex = this.indexWalk(query);
    const byChat = this.chatWalk(query);
    for (;;) {
      const found = byIndex.next().value ?? byChat.next().value;
      if (found) return found.slice(0, query.count).map((hit) => hit.pos);
    }
  }

  /** The index's walk: yields undefined after each piece, the hits once they are known to lead the page. */
  private *indexWalk(query: ChatSearchQuery): Generator<Hit[] | undefined, never> {
    const { deviceId, chatId, match, cleared, count } = query;
    const hits: Hit[] = [];
    let below = query.below ?? NO_BOUND;
    for (let piece = FIRST_HITS; ; piece *= 2) {
      const rows = this.sql().hits.all(match, below, piece, deviceId, chatId, cleared.at, cleared.pos);
      const [lowest, walked] = rows.find((row) => row[2] === 1)!;
      for (const [key, pos, summary] of rows) if (summary === 0) hits.push({ key, pos });
      // Every hit of the chat with a key from `lowest` up is in: complete once a page's worth is, or at the end.
      if (hits.length >= count || walked < piece) {
        hits.sort((a, b) => b.key - a.key);
        for (;;) yield hits;
      }
      below = BigInt(lowest);
      yield undefined;
    }
  }

  /** The chat's walk: its messages newest first by (time, position), each asked of the index. */
  private *chatWalk(query: ChatSearchQuery): Generator<Hit[] | undefined, never> {
    const { deviceId, chatId, match, cleared, count } = query;
    const hits: Hit[] = [];
    const below = query.below ?? NO_BOUND;
    // Messages of a later second than the bound's have keys above it: the walk starts at the bound's second.
    const block = query.below === undefined ? LAST_BLOCK : blockOfKey(query.below);
    // The last second holds every time after it too (message-search-keys.ts): no bound on time then.
    let from: [number, number] = [block >= LAST_BLOCK ? Number.POSITIVE_INFINITY : block + 1, 0];
    for (let piece = FIRST_MESSAGES; ; piece *= 2) {
      const rows = this.sql().messages.all(match, deviceId, chatId, ...from, cleared.at, cleared.pos, below, piece);
      for (const [, pos, key, hit] of rows) if (hit === 1) hits.push({ key, pos });
      const last = rows[rows.length - 1];
      const ended = rows.length < piece;
      // Seconds before the last message's may hold messages not walked yet: only later seconds are complete.
      const complete = ended ? hits : hits.filter((hit) => hit.key >= searchBlockRange(last[0]).end);
      if (complete.length >= count || ended) {
        complete.sort((a, b) => b.key - a.key);
        for (;;) yield complete;
      }
      from = [last[0], last[1]];
      yield undefined;
    }
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    return {
      // A piece of the index's walk: the chat's hits in it, then one row (summary 1) with its lowest key and size.
      hits: this.db
        .prepare<[string, bigint, number, string, string, number, number], [number, number, 0 | 1]>(
          `WITH walked AS MATERIALIZED (
            SELECT rowid AS key FROM chat_messages_search WHERE chat_messages_search MATCH ? AND rowid < ?
            ORDER BY rowid DESC LIMIT ?
          )
          SELECT w.key, m.pos, 0 FROM walked w
            CROSS JOIN chat_messages_search_keys k ON k.key = w.key
            CROSS JOIN chat_messages m ON m.pos = k.pos
            WHERE m.device_id = ? AND m.chat_id = ? AND m.deleted = 0 AND (m.at, m.pos) > (?, ?)
          UNION ALL SELECT min(key), count(*), 1 FROM walked`,
        )
        .raw(true),
      // A piece of the chat's walk: its messages below (at, pos), with their keys and whether they match.
      messages: this.db
        .prepare<
          [string, string, string, number, number, number, number, bigint, number],
          [number, number, number, 0 | 1]
        >(
          `SELECT m.at, m.pos, k.key, EXISTS (
              SELECT 1 FROM chat_messages_search f WHERE f.rowid = k.key AND chat_messages_search MATCH ?
            )
          FROM chat_messages m
            CROSS JOIN chat_messages_search_keys k ON k.pos = m.pos
          WHERE m.device_id = ? AND m.chat_id = ? AND m.type <> 'reaction' AND (m.at, m.pos) < (?, ?)
            AND (m.at, m.pos) > (?, ?) AND m.deleted = 0 AND k.key < ?
          ORDER BY m.at DESC, m.pos DESC LIMIT ?`,
        )
        .raw(true),
    };
  }
}

/** The second (block) of a key, and the last one. */
const blockOfKey = (key: bigint) => Number(key / BigInt(searchBlockRange(0).end));
const LAST_BLOCK = searchBlockOf(Number.POSITIVE_INFINITY);
