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
  const node = schema as {
    [NUMBER_KEYWORD]?: NumberField;
    properties?: Record<string, TSchema>;
    items?: TSchema;
    anyOf?: TSchema[];
  };
  // A list or a word (`mentions`: numbers or "all"): the list is read as a list.
  if (node.anyOf && Array.isArray(value)) {
    const list = node.anyOf.find((branch) => (branch as { items?: TSchema }).items !== undefined);
    return list ? readNumbers(list, value, location, path) : value;
  }
  const field = node[NUMBER_KEYWORD];
  if (field !== undefined && typeof value === 'string') {
    const parsed = parseNumber(value, field);
    if (parsed.ok) return parsed.value;
    throw invalidRequest(`${location}${path} ${parsed.message}`, [{ path: path || '/', message: parsed.message }]);
  }
  if (node.properties && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    let copy: Record<string, unknown> | undefined;
    for (const { name, schema: property, pointer } of numberPropertiesOf(schema)) {
      if (!Object.hasOwn(value, name)) continue;
      const before = (value as Record<string, unknown>)[name];
      const after = readNumbers(property, before, location, `${path}/${pointer}`);
      if (after !== before) (copy ??= { ...(value as Record<string, unknown>) })[name] = after;
    }
    return copy ?? value;
  }
  if (node.items && Array.isArray(value) && holdsNumbers(node.items)) {
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
 * Which properties of an object schema hold number fields at some depth, worked out once per schema:
 * a request's body is then walked only where a number can be (most of it never is).
 */
const numberProperties = new WeakMap<TSchema, ReadonlyArray<{ name: string; schema: TSchema; pointer: string }>>();

function numberPropertiesOf(schema: TSchema): ReadonlyArray<{ name: string; schema: TSchema; pointer: string }> {
  let known = numberProperties.get(schema);
  if (!known) {
    const properties = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
    known = Object.entries(properties)
      .filter(([, property]) => holdsNumbers(property))
      .map(([name, property]) => ({ name, schema: property, pointer: escapePointer(name) }));
    numberProperties.set(schema, known);
  }
  return known;
}

const numberHolders = new WeakMap<TSchema, boolean>();

/** Whether a schema marks a number field (NUMBER_KEYWORD) in itself, its properties or its items, at any depth. */
function holdsNumbers(schema: TSchema, visiting = new Set<TSchema>()): boolean {
  const known = numberHolders.get(schema);
  if (known !== undefined) return known;
  // A schema met again on its own path (a recursive one) may hold numbers: walk it as before.
  if (visiting.has(schema)) return true;
  visiting.add(schema);
  const node = schema as {
    [NUMBER_KEYWORD]?: NumberField;
    properties?: Record<string, TSchema>;
    items?: TSchema;
    anyOf?: TSchema[];
  };
  const holds =
    node[NUMBER_KEYWORD] !== undefined ||
    (node.anyOf ?? []).some((branch) => holdsNumbers(branch, visiting)) ||
    Object.values(node.properties ?? {}).some((property) => holdsNumbers(property, visiting)) ||
    (node.items !== undefined && holdsNumbers(node.items, visiting));
  visiting.delete(schema);
  numberHolders.set(schema, holds);
  return holds;
}

/**
 * Query and path values arrive as text: turn the ones whose property is a number, integer or boolean into
 * that type when the text is exactly such a value ("1.5" stays text for an integer and fails validation).
 */
function coerceText(schema: TSchema, input: unknown): unknown {
  const coercible = coerciblePropertiesOf(schema);
  if (coercible.length === 0 || input === null || typeof input !== 'object') return input;
  const output: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const [name, type] of coercible) {
    const text = output[name];
    if (typeof text !== 'string') continue;
    // Up to Number.MAX_SAFE_INTEGER (16 digits); a larger one stays text and is refused as not an integer.
    if (type === 'integer' && /^-?\d{1,16}$/.test(text) && Number.isSafeInteger(Number(text)))
      output[name] = Number(text);
    else if (type === 'number' && /^-?\d{1,15}(\.\d{1,15})?$/.test(text)) output[name] = Number(text);
    else if (type === 'boolean' && (text === 'true' || text === 'false')) output[name] = text === 'true';
  }
  return output;
}

const coercibleProperties = new WeakMap<TSchema, ReadonlyArray<[string, string]>>();

/** The properties whose text may become a number, an integer or a boolean (worked out once per schema). */
function coerciblePropertiesOf(schema: TSchema): ReadonlyArray<[string, string]> {
  let known = coercibleProperties.get(schema);
  if (!known) {
    const properties = (schema as { properties?: Record<string, { type?: string }> }).properties ?? {};
    known = Object.entries(properties).flatMap(([name, property]): Array<[string, string]> =>
      property.type === 'integer' || property.type === 'number' || property.type === 'boolean'
        ? [[name, property.type]]
        : [],
    );
    coercibleProperties.set(schema, known);
  }
  return known;
}

/** The first few errors as one sentence, each naming its field (`body/to must be …`). */
function detailOf(location: Location, errors: FieldError[]): string {
  const shown = errors
    .slice(0, 3)
    .map((error) => `${location}${error.path === '/' ? '' : error.path} ${error.message}`);
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
      for (const name of names)
        errors.push({ path: `${error.instancePath}/${escapePointer(name)}`, message: 'is not a known property' });
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
        throw invalidRequest(`${location}${keyPath} is a forbidden key`, [
          { path: keyPath, message: 'is a forbidden key' },
        ]);
      }
      pending.push({ value: (node as Record<string, unknown>)[key], path: keyPath, depth: depth + 1 });
    }
  }
}

const escapePointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');
