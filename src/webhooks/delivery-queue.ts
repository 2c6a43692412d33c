/**
 * Where attempts wait for their turn: one rate-limited p-queue per destination host (host:port), in front
 * of one p-queue that caps the attempts in flight over all devices. A device has at most one attempt
 * waiting or in flight (its deliveries go in order), so a slow receiver holds one slot, not the others'.
 */
import PQueue from 'p-queue';

export interface DeliveryQueueOptions {
  concurrency: number;
  hostRatePerSecond: number;
}

/** Host queues idle this long are dropped (their rate window has long passed). */
const IDLE_HOST_SWEEP_MS = 60_000;

export class DeliveryQueue {
  private readonly inFlight: PQueue;
  private readonly hosts = new Map<string, PQueue>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: DeliveryQueueOptions) {
    this.inFlight = new PQueue({ concurrency: options.concurrency });
    this.sweeper = setInterval(() => this.sweepIdleHosts(), IDLE_HOST_SWEEP_MS).unref();
  }

  /** Runs `task` once the host's rate and the global concurrency allow it. */
  run<T>(host: string, task: () => Promise<T>): Promise<T> {
    let queue = this.hosts.get(host);
    if (!queue) {
      queue = this.hostQueue();
      this.hosts.set(host, queue);
    }
    return queue.add(() => this.inFlight.add(task));
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  /** Spread over tenths of a second, so that a second's allowance does not leave in one burst. */
  private hostQueue(): PQueue {
    const rate = this.options.hostRatePerSecond;
    return rate >= 10 ? new PQueue({ interval: 100, intervalCap: Math.ceil(rate / 10) }) : new PQueue({ interval: 1_000, intervalCap: rate });
  }

  private sweepIdleHosts(): void {
    for (const [host, queue] of this.hosts) if (queue.size === 0 && queue.pending === 0) this.hosts.delete(host);
  }
}
