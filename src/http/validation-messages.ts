/**
 * TypeBox's validation errors in plain words: each names what was expected ("must be one of: sandbox,
 * baileys", "must be a number with the country code, digits only, e.g. 4915112345678"), never a regex.
 * The wording of a field comes from its own schema (found by the error's schemaPath): a number field says
 * what a number looks like, an enum lists its values, a pattern without known words quotes the field's
 * description.
 */
import type { TSchema } from 'typebox';
import { NUMBER_EXAMPLE, NUMBER_KEYWORD, type NumberField } from '../messages/phone-number.js';

export interface TypeBoxError {
  keyword: string;
  schemaPath?: string;
  instancePath: string;
  message: string;
  params: Record<string, unknown>;
}

const NUMBER_WORDS: Record<NumberField, string> = {
  phone: `a phone number with the country code, digits only (e.g. ${NUMBER_EXAMPLE}; +, spaces and dashes are fine)`,
  phone_or_lid: `a phone number with the country code (e.g. ${NUMBER_EXAMPLE}) or \`<digits>@lid\``,
  chat: `a phone number with the country code (e.g. ${NUMBER_EXAMPLE}), a group id (\`120363…@g.us\`) or \`<digits>@lid\``,
};

/** Patterns the API uses, in words. */
const PATTERN_WORDS: ReadonlyMap<string, string> = new Map([
  [
    '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$',
    'letters, digits, `-` and `_`, starting with a letter or digit, at most 64 characters (e.g. shop-1)',
  ],
  ['^[Hh][Tt][Tt][Pp][Ss]?://', 'an http:// or https:// URL'],
  [
    '^[A-Za-z0-9._:-]{1,128}$',
    'a WhatsApp message id (letters, digits, `.`, `_`, `:`, `-`; e.g. 3EB0A1B2C3D4E5F6A7B8C9)',
  ],
  ['\\S', 'text that is not only spaces'],
]);

const FORMAT_WORDS: Record<string, string> = {
  uri: 'an absolute URL (e.g. https://example.com/hook)',
  'date-time': 'a date and time in ISO 8601 (e.g. 2026-01-31T12:00:00Z)',
  email: 'an e-mail address',
};

const TYPE_WORDS: Record<string, string> = {
  string: 'text (a JSON string)',
  integer: 'a whole number',
  number: 'a number',
  boolean: '`true` or `false`',
  object: 'a JSON object',
  array: 'a JSON array',
  null: '`null`',
};

/** The schema at a schemaPath such as `#/properties/mentions/items`. */
export function schemaAt(root: TSchema, schemaPath: string | undefined): Record<string, unknown> | undefined {
  if (!schemaPath || !schemaPath.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of schemaPath.slice(1).split('/').filter(Boolean)) {
    const token = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[token];
  }
  return node !== null && typeof node === 'object' ? (node as Record<string, unknown>) : undefined;
}

const list = (values: readonly unknown[]) =>
  values.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))).join(', ');

/** What the value is, briefly, for "must be X, not Y". */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'a whole number' : `the number ${value}`;
  if (typeof value === 'string') return 'text';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function valueAt(input: unknown, pointer: string): unknown {
  let node = input;
  for (const raw of pointer.split('/').slice(1)) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[token];
  }
  return node;
}

/** One error in words (the field itself is named by the error's path). */
export function plainMessage(error: TypeBoxError, root: TSchema, input: unknown): string {
  const schema = schemaAt(root, error.schemaPath) ?? {};
  const { params } = error;
  switch (error.keyword) {
    case 'required': {
      const names = (params.requiredProperties as string[] | undefined) ?? [];
      return names.length === 1
        ? `needs \`${names[0]}\`, which is missing`
        : `needs ${list(names.map((name) => `\`${name}\``))}, which are missing`;
    }
    case 'pattern': {
      const number = schema[NUMBER_KEYWORD] as NumberField | undefined;
      if (number) return `must be ${NUMBER_WORDS[number]}`;
      const words = PATTERN_WORDS.get(String(params.pattern));
      if (words) return `must be ${words}`;
      const description = typeof schema.description === 'string' ? schema.description : undefined;
      return description ? `does not have the expected form: ${description}` : 'does not have the expected form';
    }
    case 'enum':
      return `must be one of: ${list((params.allowedValues as unknown[] | undefined) ?? (schema.enum as unknown[] | undefined) ?? [])}`;
    case 'const':
      return `must be ${list([params.allowedValue ?? schema.const])}`;
    case 'type': {
      const expected = String(params.type);
      return `must be ${TYPE_WORDS[expected] ?? expected}, not ${kindOf(valueAt(input, error.instancePath))}`;
    }
    case 'minLength':
      return Number(params.limit) === 1
        ? 'must not be empty'
        : `must be at least ${String(params.limit)} characters long`;
    case 'maxLength':
      return `must be at most ${String(params.limit)} characters long`;
    case 'minimum':
      return `must be at least ${String(params.limit)}`;
    case 'maximum':
      return `must be at most ${String(params.limit)}`;
    case 'exclusiveMinimum':
      return `must be greater than ${String(params.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(params.limit)}`;
    case 'minItems':
      return `must have at least ${String(params.limit)} item${Number(params.limit) === 1 ? '' : 's'}`;
    case 'maxItems':
      return `must have at most ${String(params.limit)} items`;
    case 'uniqueItems':
      return 'must not list the same item twice';
    case 'minProperties':
      return `must have at least ${String(params.limit)} propert${Number(params.limit) === 1 ? 'y' : 'ies'}`;
    case 'maxProperties':
      return `must have at most ${String(params.limit)} properties`;
    case 'format': {
      const format = String(params.format ?? schema.format);
      return `must be ${FORMAT_WORDS[format] ?? `in the format ${format}`}`;
    }
    case 'anyOf':
    case 'oneOf':
      return 'does not match any of the accepted forms (see this operation in /openapi.json)';
    default:
      return error.message;
  }
}
