/**
 * Event schemas change; the log does not. An event carries its schema version in `metadata.schemaVersion`
 * and is brought to the current one whenever it is read, by one function per type and version, so code only
 * sees current schemas (docs/architecture.md, "Event schemas and upcasting"). This module knows no event
 * type: the domain modules declare their upcasters and src/event-schemas.ts hands them to the store.
 */
import { DelegatingEventStore } from './delegating-store.js';
import type {
  AppendOptions,
  AppendResult,
  EventStore,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  StoredEvent,
  SubscribeOptions,
  Subscription,
} from './event-store.js';

export interface Upcaster {
  type: string;
  /** The version this function reads; it returns the data of version `fromVersion + 1`. */
  fromVersion: number;
  upcast(data: unknown, stored: StoredEvent): unknown;
}

export const SCHEMA_VERSION_KEY = 'schemaVersion';

/** Per type: the upcasters in version order, and the current version. */
interface TypeSchema {
  steps: Map<number, Upcaster>;
  current: number;
}

export class Upcasters {
  private readonly byType = new Map<string, TypeSchema>();

  constructor(upcasters: readonly Upcaster[]) {
    for (const upcaster of upcasters) {
      const schema = this.byType.get(upcaster.type) ?? { steps: new Map(), current: 1 };
      if (schema.steps.has(upcaster.fromVersion))
        throw new Error(`two upcasters of ${upcaster.type} from version ${upcaster.fromVersion}`);
      schema.steps.set(upcaster.fromVersion, upcaster);
      schema.current = Math.max(schema.current, upcaster.fromVersion + 1);
      this.byType.set(upcaster.type, schema);
    }
    for (const [type, schema] of this.byType) {
      for (let version = 1; version < schema.current; version++) {
        if (!schema.steps.has(version)) throw new Error(`no upcaster of ${type} from version ${version}`);
      }
    }
  }

  /** The schema version new events of this type are written with. */
  currentVersion(type: string): number {
    return this.byType.get(type)?.current ?? 1;
  }

  /** The event with its data at the current version (the same object when there is nothing to do). */
  upcast(stored: StoredEvent): StoredEvent {
    const schema = this.byType.get(stored.type);
    if (!schema) return stored;
    const written = Number(stored.metadata?.[SCHEMA_VERSION_KEY] ?? 1);
    if (written >= schema.current) return stored;
    let data = stored.data;
    for (let version = written; version < schema.current; version++)
      data = schema.steps.get(version)!.upcast(data, stored);
    return { ...stored, data, metadata: { ...stored.metadata, [SCHEMA_VERSION_KEY]: schema.current } };
  }

  /** The event as it is to be written: stamped with its current version where its type has versions. */
  stamp(event: NewEvent): NewEvent {
    const schema = this.byType.get(event.type);
    if (!schema) return event;
    return { ...event, metadata: { ...event.metadata, [SCHEMA_VERSION_KEY]: schema.current } };
  }
}

/** The store with every event read brought to its current schema and every event written stamped with it. */
export class UpcastingEventStore extends DelegatingEventStore {
  constructor(
    inner: EventStore,
    private readonly upcasters: Upcasters,
  ) {
    super(inner);
  }

  override append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    const stamped = events.map((event) => this.upcasters.stamp(event));
    const onConflict = options?.onConflict;
    if (!onConflict) return this.inner.append(streamId, stamped, options);
    // What is decided again is decided on current schemas, and written stamped like any append.
    return this.inner.append(streamId, stamped, {
      ...options,
      onConflict: (newer) =>
        onConflict(newer.map((event) => this.upcasters.upcast(event)))?.map((event) => this.upcasters.stamp(event)),
    });
  }

  override async readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]> {
    return (await this.inner.readStream(streamId, options)).map((event) => this.upcasters.upcast(event));
  }

  override async readAll(options?: ReadAllOptions): Promise<StoredEvent[]> {
    return (await this.inner.readAll(options)).map((event) => this.upcasters.upcast(event));
  }

  override subscribe(options?: SubscribeOptions): Subscription {
    const inner = this.inner.subscribe(options);
    const upcasters = this.upcasters;
    return {
      close: () => inner.close(),
      // Not an async generator, which would hold the last batch in its registers until the next one (live-feed.ts).
      [Symbol.asyncIterator]() {
        const batches = inner[Symbol.asyncIterator]();
        return {
          next: async () => {
            const next = await batches.next();
            return next.done ? next : { done: false, value: next.value.map((event) => upcasters.upcast(event)) };
          },
          return: async () => (await batches.return?.()) ?? { done: true, value: undefined },
        };
      },
    };
  }
}
