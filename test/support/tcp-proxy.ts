/**
 * A TCP proxy between the gateway and a broker (RabbitMQ, NATS), so that a test can take the broker away
 * without touching it (the brokers are shared): `cut()` destroys every connection through it and refuses new
 * ones until `restore()`.
 */
import { once } from 'node:events';
import { type Socket, createConnection, createServer } from 'node:net';

export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private isCut = false;
  private readonly server = createServer((client) => this.accept(client));
  /** Connections made through it (refused ones not counted). */
  connections = 0;
  /** Connections refused while cut: how often a client tried again meanwhile. */
  refused = 0;

  private constructor(
    private readonly targetPort: number,
    private readonly targetHost: string,
  ) {}

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetPort, targetHost);
    proxy.server.listen(0, '127.0.0.1');
    await once(proxy.server, 'listening');
    return proxy;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  /** Every connection through it ends now; new ones are refused. */
  cut(): void {
    this.isCut = true;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.isCut = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (this.isCut) {
      this.refused += 1;
      client.destroy();
      return;
    }
    this.connections += 1;
    const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }
}
