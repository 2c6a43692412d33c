/**
 * Examples for /openapi.json, made from the same TypeBox schemas that validate requests, so that an example
 * always fits its schema (test/http/openapi.examples.e2e.test.ts checks every one). Strings take a realistic
 * value that satisfies the field's pattern, format and lengths; objects their required properties (requests)
 * or all of them (answers, events). A route gives its own where the schema cannot say what makes sense.
 */
import type { TSchema } from 'typebox';
import { NUMBER_EXAMPLE, NUMBER_KEYWORD } from '../messages/phone-number.js';

type Schema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
};

/** Realistic values by property name, used when they fit the field's constraints. */
const BY_NAME: Readonly<Record<string, unknown>> = {
  id: 'shop-1',
  deviceId: 'shop-1',
  name: 'Shop',
  text: 'Your order has shipped',
  body: 'Your order has shipped',
  caption: 'The parcel',
  url: 'https://example.com/media/parcel.jpg',
  filename: 'invoice.pdf',
  mimetype: 'image/jpeg',
  emoji: '👍',
  question: 'Which day suits you?',
  waMessageId: '3EB0A1B2C3D4E5F6A7B8C9',
  messageId: '3EB0A1B2C3D4E5F6A7B8C9',
  lid: '123456789012345@lid',
  outboxId: '0195b1c2-7d3e-7aa0-8f00-123456789abc',
  secret: `whsec_${'A'.repeat(43)}=`,
  deviceKey: 'dk_Yk3p9s0mW1nQ2rT4uV6xZ8aB0cD2eF4g',
  qr: '2@ABCdef123456,ghiJKL789,mnoPQR012=',
  latitude: 52.52,
  longitude: 13.405,
  address: 'Alexanderplatz 1, Berlin',
  code: 'invalid_request',
  stream: 'outbox-shop-1',
  type: 'MessageReceived',
  phone: NUMBER_EXAMPLE,
  from: NUMBER_EXAMPLE,
  recipient: NUMBER_EXAMPLE,
  chatId: NUMBER_EXAMPLE,
  jid: `${NUMBER_EXAMPLE}@s.whatsapp.net`,
  pushName: 'Anna',
  reason: 'connection_lost',
  title: 'Bad Request',
  detail: 'body/to must be a phone number with the country code, digits only (e.g. 4915112345678)',
  description: 'Orders and deliveries',
  inviteLink: 'https://whatsapp.com/channel/0029VaExampleCode1234567',
  organization: 'Example GmbH',
  email: 'anna@example.com',
  lastError: 'HTTP 503 from the receiver',
  lastStatus: 200,
  sha256: 'a3f5c9e1b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c6e8b0d2f4a6',
  message: 'body/to must be a phone number with the country code',
};

/** Strings tried in turn for a pattern no name matched. */
const CANDIDATES = [
  NUMBER_EXAMPLE,
  'shop-1',
  '3EB0A1B2C3D4E5F6A7B8C9',
  'https://example.com/media/parcel.jpg',
  'image/jpeg',
  'dk_Yk3p9s0mW1nQ2rT4uV6xZ8aB0cD2eF4g',
  `whsec_${'A'.repeat(43)}=`,
  '120363000000000001@g.us',
  '120363000000000002@newsletter',
  '0195b1c2-7d3e-7aa0-8f00-123456789abc',
  'message.received,message.status',
  'app.js',
  '+49 151 12345678',
  'Shop',
];

const FORMATS: Readonly<Record<string, string>> = {
  'date-time': '2026-01-31T12:00:00.000Z',
  uri: 'https://example.com/media/parcel.jpg',
  binary: '<bytes>',
  uuid: '0195b1c2-7d3e-7aa0-8f00-123456789abc',
  email: 'anna@example.com',
};

function fits(value: string, schema: Schema): boolean {
  if (typeof schema.minLength === 'number' && [...value].length < schema.minLength) return false;
  if (typeof schema.maxLength === 'number' && [...value].length > schema.maxLength) return false;
  if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) return false;
  if (typeof schema.format === 'string' && schema.format === 'uri' && !/^[a-z][a-z0-9+.-]*:/i.test(value)) return false;
  return true;
}

function stringExample(schema: Schema, name: string | undefined): string {
  if (schema[NUMBER_KEYWORD] !== undefined) return NUMBER_EXAMPLE;
  if (
    typeof schema.format === 'string' &&
    FORMATS[schema.format] &&
    fits(FORMATS[schema.format], { ...schema, format: undefined })
  )
    return FORMATS[schema.format];
  const named = name === undefined ? undefined : BY_NAME[name];
  if (typeof named === 'string' && fits(named, schema)) return named;
  const candidate = CANDIDATES.find((value) => fits(value, schema));
  if (candidate !== undefined) return candidate;
  return 'x'.repeat(typeof schema.minLength === 'number' ? schema.minLength : 1);
}

function numberExample(schema: Schema, name: string | undefined, integer: boolean): number {
  const named = name === undefined ? undefined : BY_NAME[name];
  const min =
    typeof schema.minimum === 'number'
      ? schema.minimum
      : typeof schema.exclusiveMinimum === 'number'
        ? schema.exclusiveMinimum + 1
        : undefined;
  const max =
    typeof schema.maximum === 'number'
      ? schema.maximum
      : typeof schema.exclusiveMaximum === 'number'
        ? schema.exclusiveMaximum - 1
        : undefined;
  if (
    typeof named === 'number' &&
    (!integer || Number.isInteger(named)) &&
    (min === undefined || named >= min) &&
    (max === undefined || named <= max)
  )
    return named;
  const value = min ?? (max !== undefined && max < 1 ? max : 1);
  return integer ? Math.ceil(value) : value;
}

/**
 * An example of `schema`; `optional` also fills optional properties (answers and events), else only the
 * required ones (requests). Undefined when the schema says nothing to make one from.
 */
export function exampleOf(schema: TSchema, options: { optional?: boolean; name?: string } = {}): unknown {
  return make(schema as Schema, options.optional ?? true, options.name, 0);
}

function make(schema: Schema, optional: boolean, name: string | undefined, depth: number): unknown {
  if (depth > 8) return undefined;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives?.length)
    return make(alternatives.find((s) => s.type !== 'null') ?? alternatives[0], optional, name, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return stringExample(schema, name);
    case 'integer':
      return numberExample(schema, name, true);
    case 'number':
      return numberExample(schema, name, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      if (!schema.items) return [];
      const count = Math.max(1, typeof schema.minItems === 'number' ? schema.minItems : 1);
      const singular = name?.endsWith('s') ? name.slice(0, -1) : name;
      const items: unknown[] = [];
      for (let i = 0; i < count; i++) {
        let item = make(schema.items, optional, singular, depth + 1);
        // Distinct items where the array asks for them (poll options).
        if (i > 0 && typeof item === 'string' && fits(`${item} ${i + 1}`, schema.items)) item = `${item} ${i + 1}`;
        items.push(item);
      }
      return items;
    }
    case 'object': {
      const example: Record<string, unknown> = {};
      const required = new Set(schema.required ?? []);
      for (const [key, property] of Object.entries(schema.properties ?? {})) {
        if (!optional && !required.has(key)) continue;
        const value = make(property, optional, key, depth + 1);
        if (value !== undefined) example[key] = value;
      }
      return example;
    }
    case undefined:
      // No type at all (Unknown): any JSON; an empty object says so.
      return {};
    default:
      return undefined;
  }
}
