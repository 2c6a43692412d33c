/**
 * A worker of GATEWAY_PROCESSES follows the machine projector's position (src/projections/projector-link.ts): it
 * starts at the projector's first answer, releases a request's wait once the projector got past its append,
 * drops the cached views the batch changed (by read model and key) before that, and hands on the webhook work.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ProjectionLagError } from '../../src/projections/projection-runner.js';
import {
  type ChangedMessage,
  type ProjectedMessage,
  type ProjectorChannel,
  ProjectorLink,
  isHelloMessage,
  isKeyUseMessage,
} from '../../src/projections/projector-link.js';
import { TestClock } from '../support/test-clock.js';

function channel() {
  const sent: unknown[] = [];
  let listener: ((message: unknown) => void) | undefined;
  const port: ProjectorChannel = {
    send: (message) => sent.push(message),
    onMessage: (l) => {
      listener = l;
      return () => (listener = undefined);
    },
  };
  const tell = (message: Partial<ProjectedMessage>) =>
    listener?.({ dmg: 'projected', main: 0, webhooks: 0, failing: false, work: [], ...message });
  const change = (keys: ChangedMessage['keys']) => listener?.({ dmg: 'changed', keys } satisfies ChangedMessage);
  return { port, sent, tell, change, listening: () => listener !== undefined };
}

describe('ProjectorLink', () => {
  it("says hello, starts at the projector's first answer and follows its position", async () => {
    const { port, sent, tell } = channel();
    const link = new ProjectorLink(port, pino({ level: 'silent' }), 1_000, new TestClock());
    let started = false;
    const start = link.main.start().then(() => (started = true));
    expect(sent.filter(isHelloMessage)).toHaveLength(1);
    await Promise.resolve();
    expect(started).toBe(false);
    tell({ main: 5, webhooks: 3 });
    await start;
    expect([link.main.position, link.webhooks.position]).toEqual([5, 3]);
    // A second start (the webhooks' runner) neither says hello again nor waits.
    await link.webhooks.start();
    expect(sent.filter(isHelloMessage)).toHaveLength(1);
  });

  it('releases a wait once the projector got past the append, after dropping the changed views', async () => {
    const { port, tell, change } = channel();
    const clock = new TestClock();
    const link = new ProjectorLink(port, pino({ level: 'silent' }), 1_000, clock);
    const order: string[] = [];
    link.onChanged('devices', (deviceId) => order.push(`forget device ${deviceId}`));
    link.onChanged('webhooks', (scope) => order.push(`forget webhooks ${scope}`));
    link.onChanged('webhooks', (scope) => order.push(`forget hook ${scope}`));
    link.onWork = (deviceId, webhookId, rewound) => order.push(`work ${deviceId} ${webhookId} ${rewound}`);
    const started = link.main.start();
    tell({ main: 1 });
    await started;
    const waited = link.main.waitFor(10).then(() => order.push('released'));
    change([['devices', 'a']]);
    tell({ main: 9 });
    await Promise.resolve();
    expect(order).toEqual(['forget device a']);
    // Each model's keys go to that model's forgetters only; a model no one follows is passed over.
    change([
      ['webhooks', '_global'],
      ['device-keys', 'h'],
    ]);
    tell({ main: 12, work: [['b', 'default', true]] });
    await waited;
    expect(order).toEqual([
      'forget device a',
      'forget webhooks _global',
      'forget hook _global',
      'work b default true',
      'released',
    ]);
    // An older message (positions only move on) changes nothing.
    tell({ main: 4 });
    expect(link.main.position).toBe(12);
  });

  it('answers a lag when the projector does not get there in time; settle says false', async () => {
    const { port, tell } = channel();
    const clock = new TestClock();
    const link = new ProjectorLink(port, pino({ level: 'silent' }), 1_000, clock);
    const started = link.main.start();
    tell({ main: 1, failing: true });
    await started;
    expect(link.main.failing).toBe(true);
    const waited = link.main.waitFor(2).catch((error: unknown) => error);
    const settled = link.main.settle(2);
    await clock.advance(1_000);
    expect(await waited).toBeInstanceOf(ProjectionLagError);
    expect(await settled).toBe(false);
  });

  it('answers the requests still waiting with a lag when stopped, and leaves none of their timers', async () => {
    const { port, tell } = channel();
    const clock = new TestClock();
    const link = new ProjectorLink(port, pino({ level: 'silent' }), 1_000, clock);
    const started = link.main.start();
    tell({ main: 1 });
    await started;
    const waited = link.main.waitFor(5).catch((error: unknown) => error);
    await link.main.stop();
    expect(await waited).toBeInstanceOf(ProjectionLagError);
    expect(clock.pending()).toEqual([]);
  });

  it('gives up its start when the projector never answers, and when stopped before it did', async () => {
    const clock = new TestClock();
    const silent = channel();
    const link = new ProjectorLink(silent.port, pino({ level: 'silent' }), 1_000, clock, 60_000);
    const started = link.main.start().catch((error: unknown) => error);
    await clock.advance(60_000);
    expect(await started).toBeInstanceOf(Error);
    expect(silent.listening()).toBe(false);

    const stopped = channel();
    const other = new ProjectorLink(stopped.port, pino({ level: 'silent' }), 1_000, clock, 60_000);
    const starting = other.main.start().catch((error: unknown) => error);
    await other.main.stop();
    expect(await starting).toBeInstanceOf(Error);
    expect(clock.pending()).toEqual([]);
  });

  it("hands the worker's key uses to the projector", () => {
    const { port, sent } = channel();
    const link = new ProjectorLink(port, pino({ level: 'silent' }), 1_000, new TestClock());
    link.sendKeyUses([]);
    link.sendKeyUses([['h', 5]]);
    expect(sent.filter(isKeyUseMessage)).toEqual([{ dmg: 'key-use', uses: [['h', 5]] }]);
  });

  it('stops listening when stopped', async () => {
    const { port, tell, listening } = channel();
    const link = new ProjectorLink(port, pino({ level: 'silent' }), 1_000, new TestClock());
    const started = link.main.start();
    tell({ main: 1 });
    await started;
    await link.main.stop();
    expect(listening()).toBe(false);
  });
});
