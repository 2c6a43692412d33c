/**
 * Every event a sandbox run emits, of every webhook kind, fits the payload schema /openapi.json declares
 * for it (src/webhooks/webhook-schemas.ts): what receivers are promised is what they get.
 */
import { Compile } from 'typebox/compile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_KINDS, envelopeOf, testEnvelope } from '../../src/webhooks/envelope.js';
import { WEBHOOK_PAYLOADS, envelopeSchema } from '../../src/webhooks/webhook-schemas.js';
import { eventually } from '../support/eventually.js';
import { type Api, startTestGateway } from '../support/gateway.js';
import { TestClock } from '../support/test-clock.js';
import { bringOnline, createSandboxDevice } from '../support/sessions.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const validators = Object.fromEntries(
  Object.entries(WEBHOOK_PAYLOADS).map(([kind, { schema }]) => [kind, Compile(envelopeSchema(kind, schema))]),
);

describe('webhook payload schemas', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  const clock = new TestClock({ running: true });
  beforeAll(async () => {
    gateway = await startTestGateway(
      {
        DEFAULT_ENGINE: 'sandbox',
        OUTBOX_SPACING: '0ms',
        SANDBOX_DELIVERED_DELAY_MS: '10',
        SANDBOX_READ_DELAY_MS: '10',
        SESSION_RECONNECT_BASE_DELAY_MS: '20',
        OUTBOX_MESSAGE_TTL: '1m',
        WATCHDOG_SILENCE: '1m',
      },
      { clock },
    );
    api = gateway.api;
  });
  afterAll(() => gateway.close());

  it(
    'every event of a sandbox run that touches each kind validates against its declared schema',
    { timeout: 60_000 },
    async () => {
      const shop = await createSandboxDevice(api, 'schema-shop');
      const other = await createSandboxDevice(api, 'schema-other');
      // Queued while closed: it expires (message.status expired with its error).
      await api('POST', '/devices/schema-shop/send/text', {
        deviceKey: shop.key,
        json: { to: '4915112345699', text: 'too late' },
      });
      await clock.advance(61_000);
      await eventually(
        async () =>
          (await api('GET', '/devices/schema-shop/outbox', { deviceKey: shop.key })).body.items.length === 0 ||
          undefined,
        'the queued message to expire',
      );
      await bringOnline(api, shop, '4915112340001');
      await bringOnline(api, other, '4915112340002');

      const send = (kind: string, json: unknown) =>
        api('POST', `/devices/schema-shop/send/${kind}`, { deviceKey: shop.key, json });
      expect((await send('text', { to: '4915112340002', text: 'hello', mentions: ['4915112340002'] })).status).toBe(
        202,
      );
      expect((await send('text', { to: '4915112340000', text: 'nobody' })).status).toBe(202); // recipient_not_found: failed
      expect((await send('image', { to: '4915112340002', base64: PNG, caption: 'a pixel' })).status).toBe(202);

      const inbound = (json: Record<string, unknown>) =>
        api('POST', '/sandbox/devices/schema-shop/inbound', { admin: true, json: { from: '4915112345678', ...json } });
      const text = await inbound({ body: 'hi there' });
      await inbound({ type: 'image', body: 'look', media: { base64: PNG, mimetype: 'image/png' } });
      await inbound({ type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Berlin' } });
      await inbound({ type: 'contact', contacts: [{ name: 'Anna', phone: '+49 151 1234567' }] });
      const poll = await inbound({ type: 'poll', poll: { question: 'When?', options: ['Mon', 'Tue'] } });
      await inbound({ type: 'reaction', messageId: text.body.waMessageId, body: '👍' });
      await inbound({ type: 'edit', messageId: text.body.waMessageId, body: 'hi again' });
      await inbound({ type: 'revoke', messageId: text.body.waMessageId });
      await inbound({ type: 'poll_vote', pollMessageId: poll.body.waMessageId, selectedOptions: ['Mon'] });
      await api('POST', '/sandbox/devices/schema-shop/presence', {
        admin: true,
        json: { from: '4915112345678', state: 'typing' },
      });
      await api('POST', '/sandbox/devices/schema-shop/call', {
        admin: true,
        json: { from: '4915112345678', isVideo: true },
      });
      // A group: its members hear of changes (group.updated, group.participants).
      const group = await api('POST', '/devices/schema-shop/groups', {
        deviceKey: shop.key,
        json: { subject: 'Schema', participants: ['4915112340002'] },
      });
      expect(group.status).toBe(201);
      const groupId = group.body.groupId as string;
      await eventually(
        async () =>
          (await api('GET', `/devices/schema-other/groups/${groupId}`, { deviceKey: other.key })).status === 200
            ? true
            : undefined,
        'the member to see the group',
      );
      expect(
        (
          await api('PATCH', `/devices/schema-shop/groups/${groupId}`, {
            deviceKey: shop.key,
            json: { subject: 'Renamed', announce: true },
          })
        ).status,
      ).toBe(200);
      expect(
        (
          await api('POST', `/devices/schema-shop/groups/${groupId}/participants`, {
            deviceKey: shop.key,
            json: { action: 'promote', participants: ['4915112340002'] },
          })
        ).status,
      ).toBe(200);
      // A deaf device that sends goes silent (session.health).
      await api('POST', '/sandbox/devices/schema-other/deafen', { admin: true, json: { on: true } });
      await api('POST', '/devices/schema-other/send/text', {
        deviceKey: other.key,
        json: { to: '4915112345600', text: 'anyone?' },
      });
      await eventually(() => gateway.watchdog.waitingSince('schema-other'), 'the watchdog to wait');
      await clock.advance(61_000);
      await api('POST', '/sandbox/devices/schema-shop/history', {
        admin: true,
        json: {
          chats: [{ chatId: '4915112345678', name: 'Old', messages: [{ body: 'long ago', timestamp: 1_600_000_000 }] }],
        },
      });
      // Chat management, through the API and on the phone.
      expect(
        (
          await api('PATCH', '/devices/schema-shop/chats/4915112345678', {
            deviceKey: shop.key,
            json: { archived: true, muted: true },
          })
        ).status,
      ).toBe(200);
      await api('POST', '/sandbox/devices/schema-shop/chat-update', {
        admin: true,
        json: { chatId: '4915112345678', mutedUntil: null, deletedMessageIds: [poll.body.waMessageId], cleared: true },
      });
      // Labels made on the phone and put on a chat (label.updated, chat.labels).
      await api('POST', '/sandbox/devices/schema-shop/labels', {
        admin: true,
        json: {
          labels: [{ labelId: '1', name: 'Paid', color: 3 }],
          chats: [{ chatId: '4915112345678', labelId: '1', action: 'add' }],
        },
      });
      // A join to a group that needs approval: its admins hear of the request (group.join_request).
      const third = await createSandboxDevice(api, 'schema-third');
      await bringOnline(api, third, '4915112340003');
      await api('PATCH', `/devices/schema-shop/groups/${groupId}`, {
        deviceKey: shop.key,
        json: { joinApproval: true, ephemeral: 86400 },
      });
      const invite = await api('GET', `/devices/schema-shop/groups/${groupId}/invite`, { deviceKey: shop.key });
      const asked = await api('POST', '/devices/schema-third/groups/join', {
        deviceKey: third.key,
        json: { code: invite.body.code },
      });
      expect(asked.body).toEqual({ groupId, requested: true });
      // The other device hears again (it was deafened for session.health above), so the status reaches it.
      await eventually(
        async () => (await gateway.store.readAll()).some((e) => e.type === 'SessionHealthChanged'),
        'the silence recorded',
      );
      await api('POST', '/sandbox/devices/schema-other/deafen', { admin: true, json: { on: false } });
      // A status the other device is in the audience of (status.received, with media).
      expect(
        (
          await api('POST', '/devices/schema-shop/status/image', {
            deviceKey: shop.key,
            json: { base64: PNG, caption: 'story', audience: ['4915112340002'] },
          })
        ).status,
      ).toBe(202);
      // A channel the other device follows posts (channel.message).
      const channel = await api('POST', '/devices/schema-shop/channels', {
        deviceKey: shop.key,
        json: { name: 'News' },
      });
      expect(channel.status).toBe(201);
      const { channelId } = channel.body as { channelId: string };
      expect(
        (await api('POST', `/devices/schema-other/channels/${channelId}/follow`, { deviceKey: other.key })).status,
      ).toBe(200);
      const post = await api('POST', '/devices/schema-shop/send/text', {
        deviceKey: shop.key,
        json: { to: channelId, text: 'first post' },
      });
      expect(post.status).toBe(202);
      // The follower reacts once the post is on the network; the owner hears of it (channel.reaction).
      const reaction = `/devices/schema-other/channels/${channelId}/messages/${post.body.waMessageId as string}/reaction`;
      await eventually(
        async () =>
          (await api('PUT', reaction, { deviceKey: other.key, json: { emoji: '👍' } })).status === 200
            ? true
            : undefined,
        'the post reacted to',
      );
      await api('POST', '/sandbox/devices/schema-shop/disconnect', { admin: true });

      const envelopes = async () => (await gateway.store.readAll()).map(envelopeOf).filter((e) => e !== undefined);
      const wanted = new Set<string>(WEBHOOK_EVENT_KINDS);
      await eventually(async () => {
        const seen = new Set<string>((await envelopes()).map((e) => e.event));
        const statuses = new Set(
          (await envelopes())
            .filter((e) => e.event === 'message.status')
            .map((e) => (e.data as { status: string }).status),
        );
        return [...wanted].every((kind) => seen.has(kind)) &&
          ['sent', 'delivered', 'read', 'failed', 'expired'].every((s) => statuses.has(s))
          ? true
          : undefined;
      }, 'every kind and status');

      const wrong: string[] = [];
      const all = [...(await envelopes()), testEnvelope('schema-shop')];
      for (const envelope of all) {
        const validator = validators[envelope.event]!;
        // Through JSON, as a receiver gets it.
        const received = JSON.parse(JSON.stringify(envelope)) as unknown;
        if (!validator.Check(received))
          wrong.push(
            `${envelope.event}: ${JSON.stringify([...validator.Errors(received)].slice(0, 2))} in ${JSON.stringify(received)}`,
          );
      }
      expect(wrong).toEqual([]);
      expect(all.length).toBeGreaterThan(20);
    },
  );
});
