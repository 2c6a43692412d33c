/**
 * Read-your-writes, held on the read side where the store can say cheaply how far its log goes (docs/architecture.md,
 * "Read your writes"). A send is answered once its append is committed, not once the read models include it: every
 * other request first waits until the read models include everything the log held when it arrived, so a query made
 * after a 202, on any process of the machine, still sees the message. The projector then takes the sends in batches
 * as large as its lag, which cost it less per event than one batch per round of answers (bench `projector`), and a
 * send no longer waits on it. Its lag is bounded: a send waits once the read models are `lagLimit` events behind it.
 * Without a head (EventStoreDB: asking costs a round trip to the server) a send waits for the read models as every
 * other command does, and requests wait for nothing.
 */
import type { ReadModelFeed } from './projection-runner.js';

/** How far behind a send the read models may be before it waits for them: about 0.1 s of the projector's work. */
export const DEFAULT_LAG_LIMIT = 1_000;

export interface ReadBarrierOptions {
  feed: Pick<ReadModelFeed, 'position' | 'failing' | 'settle'>;
  /** The log's last committed position, exact and cheap (the SQLite store's); undefined where there is none. */
  head?: () => number;
  lagLimit?: number;
}

export class ReadBarrier {
  private readonly lagLimit: number;

  constructor(private readonly options: ReadBarrierOptions) {
    this.lagLimit = options.lagLimit ?? DEFAULT_LAG_LIMIT;
  }

  /**
   * Before a request reads the read models: resolves once they include what the log held now. Undefined when
   * there is nothing to wait for (the common case, no promise made), or when the read models cannot be written
   * (they answer what they hold, as before; /health says they are failing).
   */
  beforeRead(): Promise<unknown> | undefined {
    const { head, feed } = this.options;
    if (!head || feed.failing) return undefined;
    const position = head();
    return feed.position >= position ? undefined : feed.settle(position);
  }

  /** After a send's append at `position`: what it waits for before its 202 (see above). */
  afterSend(position: number): Promise<unknown> | undefined {
    const { head, feed } = this.options;
    if (!head) return feed.settle(position);
    const bound = position - this.lagLimit;
    return feed.position >= bound ? undefined : feed.settle(bound);
  }
}
