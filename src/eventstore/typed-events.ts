import type { StoredEvent } from './event-store.js';

/** An event as a module declares it: a type name and its data. */
export interface TypedEvent<Type extends string = string, Data = unknown> {
  type: Type;
  data: Data;
}

/** A stored event of one of the declared types, typed as such. */
export type StoredOf<E extends TypedEvent> = StoredEvent & E;

/**
 * The one place where an event read from the store is taken for its declared type: by its type name,
 * after upcasting has brought its data to the current schema (src/eventstore/upcasting.ts).
 */
export function eventGuard<E extends TypedEvent>(
  types: ReadonlySet<string>,
): (stored: StoredEvent) => stored is StoredOf<E> {
  return (stored): stored is StoredOf<E> => types.has(stored.type);
}
