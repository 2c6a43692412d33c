/**
 * Keeps one address from taking the connections everybody else needs. Node's own `maxConnections` is one
 * cap for all: an address that opens that many sockets and sends nothing on them leaves every other client
 * refused until the server times them out. Here each address (an IPv6 one with its /64) is capped, a full
 * server makes room by taking a connection from an address holding more than the newcomer's, and a silent
 * new connection is closed after `idleMs`. The rules: docs/configuration.md, "HTTP limits".
 */
import type { Server } from 'node:http';
import { type Socket, isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface ConnectionLimits {
  maxConnections: number;
  maxPerAddress: number;
  idleMs: number;
  /** Addresses the per-address cap does not apply to (trusted proxies). */
  exempt?: (address: string) => boolean;
}

/** Why a connection was closed by the guard (the metric's label). */
export type Refusal = 'per_address' | 'full' | 'shed' | 'idle';

export function guardConnections(
  server: Server,
  limits: ConnectionLimits,
  onRefused: (reason: Refusal) => void = () => undefined,
): void {
  /** Each address's open connections, oldest first (a Set keeps insertion order). */
  const byAddress = new Map<string, Set<Socket>>();
  const addressOf = new WeakMap<Socket, string>();
  /** Groups of exempt addresses (trusted proxies): never shed, they carry everybody's requests. */
  const exemptGroups = new Set<string>();
  /** Requests in progress per connection: a connection without one is idle and the first to be given up. */
  const inProgress = new WeakMap<Socket, number>();
  let open = 0;

  server.on('request', (request, response) => {
    const socket = request.socket;
    inProgress.set(socket, (inProgress.get(socket) ?? 0) + 1);
    response.once('close', () => inProgress.set(socket, (inProgress.get(socket) ?? 1) - 1));
  });

  // The HTTP server's own listener runs only for the connections let in: a refused one costs no parser, no
  // listeners, nothing but its accept (a flood that reconnects at once must not slow everybody else).
  const httpListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    if (admit(socket)) for (const listener of httpListeners) listener.call(server, socket);
  });

  function admit(socket: Socket): boolean {
    const peer = socket.remoteAddress ?? 'unknown';
    const key = groupOf(peer);
    const held = byAddress.get(key);
    const count = held?.size ?? 0;
    const exempt = limits.exempt?.(peer) ?? false;
    if (count >= limits.maxPerAddress && !exempt) return refuse(socket, 'per_address');
    if (open >= limits.maxConnections && !makeRoomFor(count)) return refuse(socket, 'full');
    if (held) held.add(socket);
    else byAddress.set(key, new Set([socket]));
    if (exempt) exemptGroups.add(key);
    addressOf.set(socket, key);
    open++;
    const idle = setTimeout(() => {
      if (socket.bytesRead === 0) {
        onRefused('idle');
        socket.destroy();
      }
    }, limits.idleMs);
    idle.unref();
    socket.once('close', () => {
      clearTimeout(idle);
      forget(socket);
    });
    return true;
  }

  /**
   * Sheds an idle connection of the address holding the most (at least two more than `count`), not a trusted
   * proxy's. A connection with a request in progress is never taken: its client could not tell whether what it
   * asked was done. When no such connection is idle, the newcomer is refused instead.
   */
  function makeRoomFor(count: number): boolean {
    const holders = [...byAddress.entries()]
      .filter(([key, sockets]) => !exemptGroups.has(key) && sockets.size >= count + 2)
      .sort(([, a], [, b]) => b.size - a.size);
    let victim: Socket | undefined;
    for (const [, sockets] of holders) {
      for (const socket of sockets) {
        if (!inProgress.get(socket)) {
          victim = socket;
          break;
        }
      }
      if (victim) break;
    }
    if (!victim) return false;
    forget(victim);
    onRefused('shed');
    victim.resetAndDestroy();
    return true;
  }

  function forget(socket: Socket): void {
    const key = addressOf.get(socket);
    if (key === undefined) return;
    addressOf.delete(socket);
    const sockets = byAddress.get(key);
    if (!sockets?.delete(socket)) return;
    open--;
    if (sockets.size === 0) {
      byAddress.delete(key);
      exemptGroups.delete(key);
    }
  }

  /** Closes with a reset: nothing was read, and the server keeps no TIME_WAIT for it. */
  function refuse(socket: Socket, reason: Refusal): false {
    onRefused(reason);
    socket.resetAndDestroy();
    return false;
  }
}

/**
 * The address a connection counts against: IPv4 as it is (also from a dual-stack socket, `::ffff:a.b.c.d`),
 * IPv6 by its /64. Plain string work for IPv4: this runs for every connection accepted, refused ones included.
 */
function groupOf(address: string): string {
  if (isIPv4(address)) return address;
  if (address.startsWith('::ffff:') && isIPv4(address.slice(7))) return address.slice(7);
  if (!ipaddr.IPv6.isValid(address)) return address;
  const parts = ipaddr.IPv6.parse(address).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}
