import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What a gauge reads at scrape time: label values and counts, e.g. devices per session state. */
export type GaugeSource = () => Array<{ labels: Record<string, string>; value: number }>;

/**
 * The gateway's Prometheus metrics, one registry per gateway (tests run several in one process).
 * Counters move where things happen; gauges are read from the read models when scraped.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'dmg_http_requests_total',
    help: 'HTTP requests by route template, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'dmg_http_request_duration_seconds',
    help: 'HTTP request duration by route template.',
    labelNames: ['route'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });
  readonly httpConnectionsRefused = new Counter({
    name: 'dmg_http_connections_refused_total',
    help: 'Connections the server closed by reason: per_address (the address holds its maximum), full (MAX_CONNECTIONS), shed (given up for a client of another address), idle (nothing sent).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly appendDuration = new Histogram({
    name: 'dmg_eventstore_append_duration_seconds',
    help: 'Event store append latency (durable, including group-commit wait).',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });
  readonly appendFailures = new Counter({
    name: 'dmg_eventstore_append_failures_total',
    help: 'Appends that failed, by reason (conflict = wrong expected revision).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly messageStatuses = new Counter({
    name: 'dmg_message_status_total',
    help: 'Message status changes after queued (sent, delivered, read, played, failed, cancelled, deleted).',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  readonly messagesReceived = new Counter({
    name: 'dmg_messages_received_total',
    help: 'Inbound messages received by devices.',
    registers: [this.registry],
  });
  readonly webhookDeliveries = new Counter({
    name: 'dmg_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome (delivered, failed, retrying, gone).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly webhookLatency = new Histogram({
    name: 'dmg_webhook_delivery_duration_seconds',
    help: 'Duration of webhook delivery attempts.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'dmg_' });
  }

  /**
   * A gauge whose values are read from `source` at every scrape. Every label set in `known` is shown, as 0
   * when the source has nothing for it: an empty outbox reads 0, not "no data" (a scraper cannot tell that
   * from a gateway that never reports it).
   */
  gauge(
    name: string,
    help: string,
    labelNames: readonly string[],
    source: GaugeSource,
    known: ReadonlyArray<Record<string, string>> = [],
  ): void {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const labels of known) this.set(labels, 0);
        for (const { labels, value } of source()) this.set(labels, value);
      },
    });
  }

  /** A counter kept elsewhere (e.g. by src/storage/reader-threads.ts), read from `source` at every scrape. */
  countedBy(name: string, help: string, labelNames: readonly string[], source: GaugeSource): void {
    new Counter({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { labels, value } of source()) this.inc(labels, value);
      },
    });
  }

  /** Counters shown at 0 for every label value they can take, from the first scrape on. */
  zeroCounters(counters: ReadonlyArray<{ counter: Counter<string>; label: string; values: readonly string[] }>): void {
    for (const { counter, label, values } of counters) for (const value of values) counter.inc({ [label]: value }, 0);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
