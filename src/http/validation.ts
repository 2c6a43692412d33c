/**
 * Request validation with the same TypeBox schemas that document the API in /openapi.json.
 */
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { NUMBER_KEYWORD, type NumberField, parseNumber } from '../messages/phone-number.js';
import { type FieldError, invalidRequest } from './problem.js';
import { type TypeBoxError, plainMessage } from './validation-messages.js';

export type Location = 'body' | 'query' | 'params';

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export interface Validator<T> {
  /** Returns the value (coerced from strings for query and path parameters) or throws 400 invalid_request. */
  parse(input: unknown): T;
}

export function compileValidator<T>(schema: TSchema, location: Location): Validator<T> {
  const compiled = Compile(schema);
  const coerce = location !== 'body'; // query strings and path segments arrive as text
  return {
    parse(input) {
      const value = readNumbers(schema, coerce ? coerceText(schema, input) : input, location, '');
      if (compiled.Check(value)) return value as T;
      const errors = describe([...compiled.Errors(value)] as TypeBoxError[], schema, value);
      throw invalidRequest(detailOf(location, errors), errors);
    },
  };
}

/**
 * Fields marked as numbers (NUMBER_KEYWORD) are read with parseNumber (src/messages/phone-number.ts), in
 * objects and arrays at any depth the schema declares; a national number is refused here with its own words.
 * Returns a copy where something changed; the input is never modified.
 */
function readNumbers(schema: TSchema, value: unknown, location: Location, path: string): unknown {
  const node = schema as { [NUMBER_KEYWORD]?: NumberField; properties?: Record<string, TSchema>; items?: TSchema };
  const field = node[NUMBER_KEYWORD];
  if (field !== undefined && typeof value === 'string') {
    const parsed = parseNumber(value, field);
    if (parsed.ok) return parsed.value;
    throw invalidRequest(`${location}${path} ${parsed.message}`, [{ path: path || '/', message: parsed.message }]);
  }
  if (node.properties && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    let copy: Record<string, unknown> | undefined;
    for (const [name, property] of Object.entries(node.properties)) {
      if (!Object.hasOwn(value, name)) continue;
      const before = (value as Record<string, unknown>)[name];
      const after = readNumbers(property, before, location, `${path}/${escapePointer(name)}`);
      if (after !== before) (copy ??= { ...(value as Record<string, unknown>) })[name] = after;
    }
    return copy ?? value;
  }
  if (node.items && Array.isArray(value)) {
    const items = node.items;
    let changed = false;
    const mapped = value.map((item, index) => {
      const after = readNumbers(items, item, location, `${path}/${index}`);
      changed ||= after !== item;
      return after;
    });
    return changed ? mapped : value;
  }
  return value;
}

/**
 * Query and path values arrive as text: turn the ones whose property is a number, integer or boolean into
 * that type when the text is exactly such a value ("1.5" stays text for an integer and fails validation).
 */
function coerceText(schema: TSchema, input: unknown): unknown {
  const properties = (schema as { properties?: Record<string, { type?: string }> }).properties;
  if (!properties || input === null || typeof input !== 'object') return input;
  const output: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const [name, property] of Object.entries(properties)) {
    const text = output[name];
    if (typeof text !== 'string') continue;
    if (property.type === 'integer' && /^-?\d{1,15}$/.test(text)) output[name] = Number(text);
    else if (property.type === 'number' && /^-?\d{1,15}(\.\d{1,15})?$/.test(text)) output[name] = Number(text);
    else if (property.type === 'boolean' && (text === 'true' || text === 'false')) output[name] = text === 'true';
  }
  return output;
}

/** The first few errors as one sentence, each naming its field (`body/to must be …`). */
function detailOf(location: Location, errors: FieldError[]): string {
  const shown = errors.slice(0, 3).map((error) => `${location}${error.path === '/' ? '' : error.path} ${error.message}`);
  const more = errors.length - shown.length;
  return `${shown.join('; ')}${more > 0 ? `; and ${more} more (see errors)` : ''}`;
}

/** One readable error per problem, in plain words: unknown properties are named one by one, TypeBox's echo of them dropped. */
function describe(raw: TypeBoxError[], schema: TSchema, value: unknown): FieldError[] {
  const errors: FieldError[] = [];
  for (const error of raw) {
    if (error.keyword === 'boolean') continue; // the `false` sub-schema behind additionalProperties, reported below
    if (error.keyword === 'additionalProperties') {
      const names = (error.params.additionalProperties as string[] | undefined) ?? [];
      for (const name of names) errors.push({ path: `${error.instancePath}/${escapePointer(name)}`, message: 'is not a known property' });
      continue;
    }
    errors.push({ path: error.instancePath || '/', message: plainMessage(error, schema, value) });
  }
  if (errors.length === 0) errors.push({ path: '/', message: 'is not valid' });
  return errors;
}

/** Deeper JSON than this is refused: nothing in the API needs it, and recursion over it could exhaust the stack. */
export const MAX_JSON_DEPTH = 32;

/**
 * Rejects `__proto__`, `constructor` and `prototype` keys at any depth (harmless to JSON.parse, but a
 * classic way to poison objects that later code merges) and nesting deeper than MAX_JSON_DEPTH.
 * Iterative, so a hostile body cannot overflow the stack here either.
 */
export function checkJsonShape(value: unknown, location: Location): void {
  const pending: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: '', depth: 0 }];
  while (pending.length > 0) {
    const { value: node, path, depth } = pending.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) {
      throw invalidRequest(`${location}${path} is nested deeper than ${MAX_JSON_DEPTH} levels`, [
        { path: path || '/', message: `is nested deeper than ${MAX_JSON_DEPTH} levels` },
      ]);
    }
    for (const key of Object.keys(node)) {
      const keyPath = `${path}/${escapePointer(key)}`;
      if (FORBIDDEN_KEYS.has(key)) {
        throw invalidRequest(`${location}${keyPath} is a forbidden key`, [{ path: keyPath, message: 'is a forbidden key' }]);
      }
      pending.push({ value: (node as Record<string, unknown>)[key], path: keyPath, depth: depth + 1 });
    }
  }
}

const escapePointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');
