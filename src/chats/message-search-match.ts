/**
 * The FTS5 query of a search's words (`GET /messages?q=`): every word matched as a word or the start of one.
 *
 * FTS5 answers a prefix of 2 or 3 characters from its prefix indexes, walking hits in key order and stopping at the
 * page's end. Any other prefix has it merge the hits of every term the prefix starts before the walk: a word that
 * half the messages hold costs all its hits. So such a word is asked as the terms it starts, read from the index's
 * vocabulary (a few look-ups), each walked like a word: `"bico"*` becomes `("bico" OR "bicola" OR "bicome")`, and
 * one character becomes the 2-character prefixes it starts (`"b"*`: `("b" OR "ba"* OR "be"*)`). The hits are
 * the same. A word with too many terms, or one FTS5 may fold otherwise than lower case (not plain ASCII letters and
 * digits), is asked as a prefix as before.
 */
import type Database from 'better-sqlite3';

/** The most terms (or 2-character prefixes) a word is asked as; more, and it is asked as a prefix. */
export const MAX_TERMS = 40;

/** A string after every term that starts with a given one (UTF-8 order; U+10FFFF is no word character). */
const AFTER_ALL = '\u{10FFFF}';

const quoted = (term: string) => `"${term.replaceAll('"', '""')}"`;

export class SearchMatch {
  private next: Database.Statement<[string, string], string> | undefined;

  constructor(private readonly db: Database.Database) {}

  /** The MATCH expression of the words (every one required). */
  of(words: readonly string[]): string {
    return words.map((word) => this.wordMatch(word)).join(' AND ');
  }

  private wordMatch(word: string): string {
    const prefix = `${quoted(word)}*`;
    const length = [...word].length;
    if (length === 2 || length === 3 || !/^[A-Za-z0-9]+$/.test(word)) return prefix;
    const term = word.toLowerCase();
    const parts = length === 1 ? this.twoCharacterPrefixes(term) : this.termsAfter(term);
    if (parts === undefined) return prefix;
    return parts.length === 0 ? quoted(term) : `(${[quoted(term), ...parts].join(' OR ')})`;
  }

  /** The terms that start with `term` and are longer (quoted), or undefined when more than MAX_TERMS. */
  private termsAfter(term: string): string[] | undefined {
    const terms: string[] = [];
    for (let from = `${term}\u0001`; ;) {
      const found = this.firstFrom(from, `${term}${AFTER_ALL}`);
      if (found === undefined) return terms;
      if (terms.push(quoted(found)) > MAX_TERMS) return undefined;
      from = `${found}\u0001`;
    }
  }

  /** The 2-character prefixes of the terms that start with `term` (1 character), or undefined when too many. */
  private twoCharacterPrefixes(term: string): string[] | undefined {
    const prefixes: string[] = [];
    for (let from = `${term}\u0001`; ;) {
      const found = this.firstFrom(from, `${term}${AFTER_ALL}`);
      if (found === undefined) return prefixes;
      const two = [...found].slice(0, 2).join('');
      if (prefixes.push(`${quoted(two)}*`) > MAX_TERMS) return undefined;
      from = `${two}${AFTER_ALL}`;
    }
  }

  /** The first term from `from` up to `to`, by the vocabulary of one hit per row (read lazily: no term's hits counted). */
  private firstFrom(from: string, to: string): string | undefined {
    return (this.next ??= this.prepare()).get(from, to);
  }

  private prepare(): Database.Statement<[string, string], string> {
    // A table of this connection alone (nothing written to the file); its 'instance' rows are read lazily, where
    // a 'row' vocabulary counts every hit of a term before it answers.
    this.db.exec(
      "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chat_messages_search_terms USING fts5vocab(main, 'chat_messages_search', 'instance')",
    );
    return this.db
      .prepare<[string, string], string>(
        'SELECT term FROM temp.chat_messages_search_terms WHERE term >= ? AND term <= ? LIMIT 1',
      )
      .pluck();
  }
}
