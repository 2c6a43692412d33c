/**
 * Finds a request's route without @koa/router's per-request scan of every route's regular expression (about
 * a hundred), which cost more than the cheapest route itself. It looks routes up by method and segment count
 * and answers only the plain case (exact method and case, no trailing slash, every parameter non-empty);
 * anything else (HEAD, OPTIONS, 404, 405, odd spellings) goes on to the @koa/router chain behind it, so what
 * a request reaches does not change (test/http/route-index.e2e.test.ts).
 */

/** One segment of a route's path: a literal to compare, or a parameter's name. */
type Segment = { literal: string } | { param: string };

export interface IndexedRoute<T> {
  /** The route's path template, e.g. /devices/:deviceId (what @koa/router calls the matched route). */
  path: string;
  value: T;
}

export interface RouteMatch<T> {
  route: IndexedRoute<T>;
  params: Record<string, string>;
}

interface Entry<T> {
  route: IndexedRoute<T>;
  /** Undefined: a path the index cannot read; a request reaching it in its bucket goes to the fallback. */
  segments: Segment[] | undefined;
}

/** Literal segments the index compares as they are: lower case (@koa/router matches case-insensitively) and no pattern syntax. */
const PLAIN_LITERAL = /^[a-z0-9._~-]+$/;
const PARAM = /^:([A-Za-z_][A-Za-z0-9_]*)$/;

export class RouteIndex<T> {
  /** By method, then by number of segments: the routes in registration order (the first match wins, as in @koa/router). */
  private readonly buckets = new Map<string, Map<number, Entry<T>[]>>();

  add(method: string, path: string, value: T): void {
    const segments = parse(path);
    const count = path.split('/').length - 1;
    const upper = method.toUpperCase();
    let byCount = this.buckets.get(upper);
    if (!byCount) this.buckets.set(upper, (byCount = new Map<number, Entry<T>[]>()));
    let entries = byCount.get(count);
    if (!entries) byCount.set(count, (entries = []));
    entries.push({ route: { path, value }, segments });
  }

  /** The route of a request, or undefined when the fallback router must decide. */
  find(method: string, path: string): RouteMatch<T> | undefined {
    const byCount = this.buckets.get(method);
    if (!byCount || path.charCodeAt(0) !== 47 /* / */) return undefined;
    const parts = path.split('/');
    const entries = byCount.get(parts.length - 1);
    if (!entries) return undefined;
    for (const entry of entries) {
      const segments = entry.segments;
      if (!segments) return undefined;
      const params = matchSegments(segments, parts);
      if (params === null) continue;
      return params === undefined ? undefined : { route: entry.route, params };
    }
    return undefined;
  }
}

/** The segments of a route path, or undefined when it uses more than literals and whole-segment parameters. */
function parse(path: string): Segment[] | undefined {
  if (!path.startsWith('/') || path === '/') return undefined;
  const segments: Segment[] = [];
  for (const part of path.slice(1).split('/')) {
    const param = PARAM.exec(part);
    if (param) segments.push({ param: param[1] });
    else if (PLAIN_LITERAL.test(part)) segments.push({ literal: part });
    else return undefined;
  }
  return segments;
}

/**
 * Params when every segment matches; null when the route does not match; undefined when it might match in
 * a way only the fallback decides (a literal equal but for case, an empty parameter, a parameter that does
 * not decode).
 */
function matchSegments(
  segments: readonly Segment[],
  parts: readonly string[],
): Record<string, string> | null | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    const part = parts[i + 1];
    if ('literal' in segment) {
      if (part === segment.literal) continue;
      if (part.toLowerCase() === segment.literal) return undefined;
      return null;
    }
    if (part === '') return undefined;
    if (part.includes('%')) {
      try {
        params[segment.param] = decodeURIComponent(part);
      } catch {
        return undefined;
      }
    } else params[segment.param] = part;
  }
  return params;
}
