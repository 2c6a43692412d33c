import { createServer } from 'node:net';

/** A TCP port that was free a moment ago (the OS picks it; a race with another process is possible but rare). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not determine a free port'))));
    });
  });
}
