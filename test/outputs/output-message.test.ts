import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/eventstore/event-store.js';
import type { OutputConfig } from '../../src/outputs/output-events.js';
import { messageOf } from '../../src/outputs/output-message.js';

const config: OutputConfig = {
  type: 'amqp',
  url: 'amqp://127.0.0.1:5672',
  exchange: 'x',
  routingKey: 'dmg.{deviceId}.{event}',
  events: ['*'],
  devices: ['shop-1'],
};

/** A received message whose data counts the fields read from it. */
function received(deviceId: string): { stored: StoredEvent; reads: string[] } {
  const reads: string[] = [];
  const data = new Proxy(
    { deviceId, chatId: '4915100000001@s.whatsapp.net', waMessageId: 'W1', body: 'hi' },
    {
      get: (target, key, receiver) => {
        if (typeof key === 'string') reads.push(key);
        return Reflect.get(target, key, receiver) as unknown;
      },
    },
  );
  const stored = {
    id: '00000000-0000-7000-8000-000000000001',
    streamId: `inbox-${deviceId}`,
    type: 'MessageReceived',
    data,
    revision: 0,
    position: 42,
    createdAt: new Date('2026-03-02T10:00:00Z'),
  } as unknown as StoredEvent;
  return { stored, reads };
}

describe('the message of an output', () => {
  it("is the envelope of a device the output names, keyed by its template and the event's position", () => {
    const message = messageOf(received('shop-1').stored, config);
    expect(message).toMatchObject({ id: '42', key: 'dmg.shop-1.message.received', deviceId: 'shop-1' });
    expect(JSON.parse(message!.body.toString())).toMatchObject({ event: 'message.received', deviceId: 'shop-1' });
  });

  it("leaves another device's event before its envelope is made: only its deviceId is read", () => {
    const { stored, reads } = received('shop-2');
    expect(messageOf(stored, config)).toBeUndefined();
    expect(reads).toEqual(['deviceId']);
  });

  it('makes the envelope of an event once for every output that publishes it (the same body, its data read once)', () => {
    const { stored, reads } = received('shop-1');
    const first = messageOf(stored, config)!;
    const readsOnce = reads.length;
    const second = messageOf(stored, { ...config, routingKey: 'other.{event}' })!;
    expect(second.key).toBe('other.message.received');
    expect(second.body).toBe(first.body);
    // The second output reads only the deviceId its device filter needs.
    expect(reads.length - readsOnce).toBe(1);
  });
});
