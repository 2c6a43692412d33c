/**
 * A worker of GATEWAY_PROCESSES follows the machine projector's position (src/projections/projector-link.ts): it
 * starts at the projector's first answer, releases a request's wait once the projector got past its append,
 * drops the cached views of the devices the batch changed before that, and hands on the webhook work.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ProjectionLagError } from '../../src/projections/projection-runner.js';
import {
  type ProjectedMessage,
  type ProjectorChannel,
  ProjectorLink,
  isHelloMessage,
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
    listener?.({ dmg: 'projected', main: 0, webhooks: 0, failing: false, devices: [], work: [], ...message });
  return { port, sent, tell, listening: () => listener !== undefined };
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
    const { port, tell } = channel();
    const clock = new TestClock();
    const link = new ProjectorLink(port, pino({ level: 'silent' }), 1_000, clock);
    const order: string[] = [];
    link.forgetters.push((deviceId) => order.push(`forget ${deviceId}`));
    link.onWork = (deviceId, webhookId, rewound) => order.push(`work ${deviceId} ${webhookId} ${rewound}`);
    const started = link.main.start();
    tell({ main: 1 });
    await started;
    const waited = link.main.waitFor(10).then(() => order.push('released'));
    tell({ main: 9, devices: ['a'] });
    await Promise.resolve();
    expect(order).toEqual(['forget a']);
    tell({ main: 12, devices: ['b'], work: [['b', 'default', true]] });
    await waited;
    expect(order).toEqual(['forget a', 'forget b', 'work b default true', 'released']);
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
