/**
 * Conditional GETs of a chat's page and of the chat list: an ETag on every 200, `304` with no body while
 * If-None-Match names it, and a fresh 200 as soon as a write the client saw acknowledged changed the answer
 * (read your writes). Real gateway, sandbox devices, HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxDevice, createDevice, goOnline } from '../../outbox/support/sandbox-devices.js';
import { eventually } from '../../support/eventually.js';
import { type Api, startTestGateway } from '../../support/gateway.js';

const ALICE = '4915100027772';
const BOB = '4915100028884';

describe('conditional GETs of chats and their pages', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let alice: SandboxDevice;

  beforeAll(async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox', OUTBOX_SPACING: '0ms' });
    api = gateway.api;
    alice = await createDevice(api, 'alice', ALICE);
    await goOnline(api, alice);
  });
  afterAll(async () => {
    await gateway.close();
  });

  const get = (path: string, etag?: string) =>
    api('GET', `/devices/${alice.id}${path}`, {
      deviceKey: alice.key,
      ...(etag ? { headers: { 'If-None-Match': etag } } : {}),
    });
  const send = async (text: string) => {
    const sent = await api('POST', `/devices/${alice.id}/send/text`, {
      deviceKey: alice.key,
      json: { to: BOB, text },
    });
    expect(sent.status).toBe(202);
  };

  for (const [what, path] of [
    ["a chat's page", `/chats/${BOB}/messages?limit=5`],
    ['the chat list', '/chats?limit=5'],
  ] as const) {
    it(`${what}: 304 while nothing changed, 200 with the new message once a send was acknowledged`, async () => {
      await send(`first, for ${what}`);
      // The tag names the state of every read model: it settles once the send's statuses (sent, delivered…) are in.
      // A list of tags, weak or not, names it too.
      const [first, again] = await eventually(async () => {
        const answer = await get(path);
        const tag = answer.headers.get('etag') ?? undefined;
        const asked = await get(path, tag);
        const listed = await get(path, `"other", W/${tag}`);
        return asked.status === 304 && listed.status === 304 ? [answer, asked] : undefined;
      }, 'an answer not modified since');
      expect(first.status).toBe(200);
      const tag = first.headers.get('etag')!;
      expect(tag).toMatch(/^"[\w.-]+"$/);
      expect(again.body).toBe('');
      expect(again.headers.get('etag')).toBe(tag);
      expect((await get(path, '"other"')).status).toBe(200);

      await send(`second, for ${what}`);
      const after = await get(path, tag);
      expect(after.status).toBe(200);
      expect(after.headers.get('etag')).not.toBe(tag);
      expect(JSON.stringify(after.body)).toContain(`second, for ${what}`);
    });
  }
});
