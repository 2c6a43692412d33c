/**
 * Request validation with the same TypeBox schemas that document the API in /openapi.json.
 */
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { type FieldError, invalidRequest } from './problem.js';

export type Location = 'body' | 'query' | 'params';

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

interface TypeBoxError {
  keyword: string;
  instancePath: string;
  message: string;
  params: Record<string, unknown>;
}

export interface Validator<T> {
  /** Returns the value (coerced from strings for query and path parameters) or throws 400 invalid_request. */
  parse(input: unknown): T;
}

export function compileValidator<T>(schema: TSchema, location: Location): Validator<T> {
  const compiled = Compile(schema);
  const coerce = location !== 'body'; // query strings and path segments arrive as text
  return {
    parse(input) {
      const value = coerce ? Value.Convert(schema, input) : input;
      if (compiled.Check(value)) return value as T;
      const errors = describe([...compiled.Errors(value)] as TypeBoxError[]);
      throw invalidRequest(`${location}${errors[0]?.path === '/' ? '' : errors[0]?.path} ${errors[0]?.message}`, errors);
    },
  };
}

/** One readable error per problem: unknown properties are named one by one, TypeBox's echo of them dropped. */
function describe(raw: TypeBoxError[]): FieldError[] {
  const errors: FieldError[] = [];
  for (const error of raw) {
    if (error.keyword === 'boolean') continue; // the `false` sub-schema behind additionalProperties, reported below
    if (error.keyword === 'additionalProperties') {
      const names = (error.params.additionalProperties as string[] | undefined) ?? [];
      for (const name of names) errors.push({ path: `${error.instancePath}/${escapePointer(name)}`, message: 'is not a known property' });
      continue;
    }
    errors.push({ path: error.instancePath || '/', message: error.message });
  }
  if (errors.length === 0) errors.push({ path: '/', message: 'is not valid' });
  return errors;
}

/**
 * Rejects `__proto__`, `constructor` and `prototype` keys at any depth: harmless to JSON.parse, but a
 * classic way to poison objects that later code merges.
 */
export function rejectForbiddenKeys(value: unknown, location: Location, path = ''): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => rejectForbiddenKeys(item, location, `${path}/${i}`));
    return;
  }
  for (const key of Object.keys(value)) {
    const keyPath = `${path}/${escapePointer(key)}`;
    if (FORBIDDEN_KEYS.has(key)) {
      throw invalidRequest(`${location}${keyPath} is a forbidden key`, [{ path: keyPath, message: 'is a forbidden key' }]);
    }
    rejectForbiddenKeys((value as Record<string, unknown>)[key], location, keyPath);
  }
}

const escapePointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');
