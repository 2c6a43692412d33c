import { describe, expect, it } from 'vitest';
import { listen } from '../../src/http/http-server.js';

describe('the HTTP server', () => {
  it("survives a failed accept after listening (EMFILE in a flood): it is reported, not the process's end", async () => {
    const reported: Error[] = [];
    const server = await listen((_request, response) => response.end('ok'), {
      port: 0,
      host: '127.0.0.1',
      limits: { maxConnections: 10, maxPerAddress: 10 },
      onError: (error) => reported.push(error),
    });
    try {
      const failure = Object.assign(new Error('accept EMFILE'), { code: 'EMFILE', syscall: 'accept' });
      // With no 'error' listener, emit() throws the error: in Node's accept path that ends the process.
      expect(() => server.emit('error', failure)).not.toThrow();
      expect(reported).toEqual([failure]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
