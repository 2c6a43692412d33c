import type { StoredEvent, Subscription } from './event-store.js';

/**
 * Hands each batch of a subscription to `apply`, and holds none once applied. A `for await` loop keeps its last
 * batch in the suspended function's registers until the next one comes: a whole history chunk, kept while the log
 * is quiet, and kept long enough while it is busy to be moved to the old generation of the heap with every chunk.
 */
export async function forEachBatch(
  subscription: Subscription,
  apply: (batch: readonly StoredEvent[]) => void | Promise<void>,
): Promise<void> {
  const batches = subscription[Symbol.asyncIterator]();
  try {
    while (await applyNext(batches, apply));
  } catch (error) {
    await batches.return?.();
    throw error;
  }
}

/** One batch, in a call of its own: its frame, and the batch with it, is gone when it answers. */
async function applyNext(
  batches: AsyncIterator<readonly StoredEvent[]>,
  apply: (batch: readonly StoredEvent[]) => void | Promise<void>,
): Promise<boolean> {
  const next = await batches.next();
  if (next.done) return false;
  await apply(next.value);
  return true;
}
