import { invalidRequest } from './problem.js';

/** Cursors are opaque to clients: base64url of the key the next page starts after. */
export const encodeCursor = (after: string): string =>
  Buffer.from(JSON.stringify({ a: after }), 'utf8').toString('base64url');

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  try {
    const { a } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { a?: unknown };
    if (typeof a === 'string') return a;
  } catch {
    // falls through to the 400 below
  }
  throw invalidRequest('query/cursor is not a cursor this API gave out', [
    { path: '/cursor', message: 'is not a valid cursor' },
  ]);
}

/** A cursor over a sequence number (the deliveries of a webhook): its number, or a 400 for one this API did not give out. */
export function decodeSeqCursor(cursor: string | undefined): number | undefined {
  const text = decodeCursor(cursor);
  if (text === undefined) return undefined;
  if (!/^\d{1,16}$/.test(text))
    throw invalidRequest('query/cursor is not a cursor this API gave out', [
      { path: '/cursor', message: 'is not a valid cursor' },
    ]);
  return Number(text);
}
