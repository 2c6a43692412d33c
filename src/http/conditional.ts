/**
 * Conditional GETs: an answer made from the read models carries an entity tag naming their state
 * (src/projections/read-model-version.ts) and what else it shows, and a request whose If-None-Match names that
 * tag is answered 304 with no body, before any query. The tag changes with every commit, so a client that saw
 * its write acknowledged (the read models hold it by then) gets the new answer.
 */

/** A strong entity tag of these parts (read-model version, the caller's number…); ASCII, no quotes inside. */
export function entityTag(...parts: string[]): string {
  return `"${parts.map((part) => (/^[\w.-]*$/.test(part) ? part : Buffer.from(part).toString('base64url'))).join('.')}"`;
}

/** Whether If-None-Match (a list of tags, `W/` or not, or `*`) names this tag: the weak comparison RFC 9110 asks. */
export function noneMatch(header: string | undefined, tag: string): boolean {
  if (!header) return false;
  for (const listed of header.split(',')) {
    const trimmed = listed.trim();
    if (trimmed === '*' || (trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed) === tag) return true;
  }
  return false;
}
