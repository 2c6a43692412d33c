/** JSON as the gateway sends it: one document ending with a newline, so `curl` output and logs end a line. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/** Whether a handler's body is JSON to serialise (not bytes, a stream or text it already made). */
export function isJsonValue(body: unknown): boolean {
  if (body === null || typeof body !== 'object') return typeof body === 'number' || typeof body === 'boolean';
  if (Buffer.isBuffer(body) || ArrayBuffer.isView(body)) return false;
  return typeof (body as { pipe?: unknown }).pipe !== 'function';
}

/** JSON a handler made as text already (e.g. by SQLite): sent as it is; tests check it against the schema parsed. */
export class PrebuiltJson {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}
