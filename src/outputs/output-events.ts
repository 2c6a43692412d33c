/**
 * Events of an output's stream (`output-<outputId>`): a broker output (RabbitMQ or NATS JetStream) that the
 * gateway publishes the log's events to (docs/architecture.md, "Event outputs"). Its configuration, the
 * position up to which every event it selects is confirmed by the broker, and the last error it met. The URL
 * is recorded with its credentials shown as `***` (`url`); the URL itself is under `sealedUrl`, sealed with
 * ENCRYPTION_KEY when it is set (as it is without it): history views redact `sealedUrl` (src/history/redact.ts).
 */
export const outputStream = (outputId: string) => `output-${outputId}`;

export const OUTPUT_TYPES = ['amqp', 'nats'] as const;
export type OutputType = (typeof OUTPUT_TYPES)[number];

export interface OutputConfig {
  type: OutputType;
  /** The broker's URL, credentials shown as `***`. */
  url: string;
  /** The URL connected to when it differs from `url` (it carries credentials): sealed with ENCRYPTION_KEY when set. */
  sealedUrl?: string;
  /** AMQP: the topic exchange published to. */
  exchange?: string;
  /** AMQP: the routing key template (`{deviceId}`, `{event}`). */
  routingKey?: string;
  /** NATS: the subject template (`{deviceId}`, `{event}`). */
  subject?: string;
  /** NATS: the JetStream stream made (when missing) to hold the subjects. */
  stream?: string;
  /** Event kinds published (`*`: every kind). */
  events: string[];
  /** Only these devices' events; undefined: every device. */
  devices?: string[];
}

export interface OutputCreatedData extends OutputConfig {
  outputId: string;
  createdAt: string;
  /** The log's head when it was made: it publishes what follows (its first position). */
  startAfter: number;
}

/** The fields that changed; `devices: null` publishes every device's events again. */
export type OutputChange = Partial<Omit<OutputConfig, 'type' | 'devices'>> & { devices?: string[] | null };

export interface OutputChangedData extends OutputChange {
  outputId: string;
  changedAt: string;
}

export interface OutputDeletedData {
  outputId: string;
  deletedAt: string;
}

export interface OutputPositionRecordedData {
  outputId: string;
  /** Every event the output selects up to this log position is confirmed by the broker. */
  position: number;
  recordedAt: string;
}

export interface OutputErrorRecordedData {
  outputId: string;
  /** Why publishing fails (URL credentials masked); null: it works again. */
  error: string | null;
  at: string;
}

export type OutputEvent =
  | { type: 'OutputCreated'; data: OutputCreatedData }
  | { type: 'OutputChanged'; data: OutputChangedData }
  | { type: 'OutputDeleted'; data: OutputDeletedData }
  | { type: 'OutputPositionRecorded'; data: OutputPositionRecordedData }
  | { type: 'OutputErrorRecorded'; data: OutputErrorRecordedData };

export type OutputEventType = OutputEvent['type'];

export const OUTPUT_EVENT_TYPES: ReadonlySet<string> = new Set<OutputEventType>([
  'OutputCreated',
  'OutputChanged',
  'OutputDeleted',
  'OutputPositionRecorded',
  'OutputErrorRecorded',
]);
