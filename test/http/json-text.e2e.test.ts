import { describe, expect, it } from 'vitest';
import { ADMIN_KEY, startTestGateway } from '../support/gateway.js';

describe('JSON answers', () => {
  it('end with a newline, answers and problems alike, and stay JSON', async () => {
    const gateway = await startTestGateway();
    const adminKey = ADMIN_KEY;
    try {
      const answers = [
        await fetch(`${gateway.url}/health`),
        await fetch(`${gateway.url}/devices`, { headers: { 'X-Admin-Key': adminKey } }),
        await fetch(`${gateway.url}/devices/nobody`, { headers: { 'X-Admin-Key': adminKey } }),
        await fetch(`${gateway.url}/no-such-route`),
      ];
      for (const answer of answers) {
        const text = await answer.text();
        expect(text.endsWith('}\n') || text.endsWith(']\n'), `${answer.url}: ${JSON.stringify(text)}`).toBe(true);
        expect(answer.headers.get('content-type')).toMatch(/^application\/(problem\+)?json/);
        expect(() => JSON.parse(text) as unknown).not.toThrow();
        expect(Number(answer.headers.get('content-length') ?? Buffer.byteLength(text))).toBe(Buffer.byteLength(text));
      }
    } finally {
      await gateway.close();
    }
  });
});
