/**
 * What an output publishes for an event of the log: the webhook envelope (`{ id, event, deviceId, timestamp,
 * data }`, src/webhooks/envelope.ts) as JSON, under a routing key or subject made from the output's template
 * (`{deviceId}`, `{event}`), with the event's log position as its message id: the same on every try and after
 * every restart, so the broker (JetStream's duplicate window) or the consumer drops a repeat.
 */
import type { StoredEvent } from '../eventstore/event-store.js';
import { type WebhookEnvelope, envelopeOf, hookWants } from '../webhooks/envelope.js';
import type { OutputConfig, OutputType } from './output-events.js';

export interface OutgoingMessage {
  /** The event's log position, as text: AMQP `messageId`, JetStream `Nats-Msg-Id`. */
  id: string;
  /** The routing key (AMQP) or subject (NATS). */
  key: string;
  body: Buffer;
  event: string;
  deviceId: string;
  /** The stored event's id (the envelope's `id`). */
  eventId: string;
  /** When it happened (ms since the epoch). */
  timestamp: number;
}

const PLACEHOLDER = /\{([^{}]*)\}/g;
const PLACEHOLDERS = new Set(['deviceId', 'event']);
/** Characters a NATS subject token may not hold (wildcards, separators, whitespace). */
const NATS_FORBIDDEN = /[\s*>]/;

/** Why a routing key (amqp) or subject (nats) template cannot be used, undefined when it can. */
export function templateRefusal(template: string, type: OutputType): string | undefined {
  if (template.length === 0 || template.length > 200) return 'must have 1 to 200 characters';
  for (const [, name] of template.matchAll(PLACEHOLDER))
    if (!PLACEHOLDERS.has(name)) return `names {${name}}; only {deviceId} and {event} are replaced`;
  const rest = template.replace(PLACEHOLDER, 'x');
  if (rest.includes('{') || rest.includes('}')) return 'has an unmatched brace';
  if (type === 'nats') {
    if (NATS_FORBIDDEN.test(rest)) return 'must not hold whitespace, * or > (a subject to publish to, not a filter)';
    if (rest.split('.').some((token) => token === ''))
      return 'must not have empty tokens (leading, trailing or double dots)';
  }
  return undefined;
}

export const render = (template: string, deviceId: string, event: string): string =>
  template.replace(PLACEHOLDER, (_, name: string) => (name === 'deviceId' ? deviceId : event));

/** Whether the output publishes events of this kind and device. */
export const selects = (config: Pick<OutputConfig, 'events' | 'devices'>, deviceId: string, kind: string): boolean =>
  hookWants(config.events, kind) && (config.devices === undefined || config.devices.includes(deviceId));

/**
 * Each event's envelope and its JSON, made once for every output that publishes it: the caught-up outputs share
 * the same stored events (src/eventstore/log-tail.ts). Null: the event leaves in no envelope.
 */
const encoded = new WeakMap<StoredEvent, { envelope: WebhookEnvelope; body: Buffer } | null>();

function encodedOf(stored: StoredEvent): { envelope: WebhookEnvelope; body: Buffer } | null {
  let known = encoded.get(stored);
  if (known === undefined) {
    const envelope = envelopeOf(stored);
    known = envelope ? { envelope, body: Buffer.from(JSON.stringify(envelope)) } : null;
    encoded.set(stored, known);
  }
  return known;
}

/** The message of a stored event for this output; undefined when the output does not publish it. */
export function messageOf(stored: StoredEvent, config: OutputConfig): OutgoingMessage | undefined {
  // Another device's event is left before its envelope is made (most events, for an output of a few devices).
  const deviceId = (stored.data as { deviceId?: unknown } | null)?.deviceId;
  if (config.devices !== undefined && (typeof deviceId !== 'string' || !config.devices.includes(deviceId)))
    return undefined;
  const known = encodedOf(stored);
  if (!known || !selects(config, known.envelope.deviceId, known.envelope.event)) return undefined;
  const { envelope, body } = known;
  const template = (config.type === 'amqp' ? config.routingKey : config.subject) ?? '';
  return {
    id: String(stored.position),
    key: render(template, envelope.deviceId, envelope.event),
    body,
    event: envelope.event,
    deviceId: envelope.deviceId,
    eventId: envelope.id,
    timestamp: stored.createdAt.getTime(),
  };
}

/**
 * The JetStream subjects that hold every subject a template makes: the template up to its first placeholder,
 * then `>` (`dmg.{deviceId}.{event}` → `dmg.>`); the template itself when it has none.
 */
export function subjectFilterOf(template: string): string {
  const tokens = template.split('.');
  const first = tokens.findIndex((token) => token.includes('{'));
  return first === -1 ? template : [...tokens.slice(0, first), '>'].join('.');
}
