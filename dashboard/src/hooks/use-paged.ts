import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError } from '../api/client.js';

/** A page of a cursor-paged list, as GET /chats and GET /chats/:chatId/messages answer. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface Paged<T> {
  items: T[] | null;
  /** Reads the next page and adds it to the end; null on the last page. */
  more: (() => void) | null;
  reload: () => void;
  error: string;
}

/**
 * A cursor-paged list: the first page whenever one of `resetDeps` changes (another chat, another filter); when one
 * of `refreshDeps` changes (an event came) or `reload` is called, as many pages as were shown, read again, so that a
 * live update does not take the older pages away from someone reading them.
 */
export function usePaged<T>(
  load: (cursor: string | undefined) => Promise<Page<T>>,
  resetDeps: readonly unknown[],
  refreshDeps: readonly unknown[],
): Paged<T> {
  const [items, setItems] = useState<T[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [nonce, setNonce] = useState(0);
  const pages = useRef(1);
  // Each read takes a number; an answer to an older one is dropped.
  const generation = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  const readPages = async (count: number, run: number) => {
    const read: T[] = [];
    let cursor: string | undefined;
    let nextCursor: string | null = null;
    for (let page = 0; page < count; page++) {
      const answer = await loadRef.current(cursor);
      read.push(...answer.items);
      nextCursor = answer.nextCursor;
      if (nextCursor === null) break;
      cursor = nextCursor;
    }
    if (run !== generation.current) return;
    setItems(read);
    setNext(nextCursor);
    setError('');
  };
  const fail = (run: number) => (err: unknown) => {
    if (run === generation.current) setError(describeError(err));
  };

  useEffect(() => {
    pages.current = 1;
    setItems(null);
    setNext(null);
  }, resetDeps);
  useEffect(() => {
    const run = ++generation.current;
    readPages(pages.current, run).catch(fail(run));
  }, [...resetDeps, ...refreshDeps, nonce]);

  // One more page: all shown pages are read again with it, so that a refresh in flight cannot lose it.
  const more = () => {
    pages.current += 1;
    setNonce((n) => n + 1);
  };
  return { items, more: next === null ? null : more, reload: () => setNonce((n) => n + 1), error };
}
