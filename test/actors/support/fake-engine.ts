/**
 * A scripted engine for actor tests: WhatsApp itself cannot run here. Each connect() makes a FakeConnection
 * that the test drives through the callbacks the real engines use.
 */
import type { Engine, EngineConnection, EngineEvents, OutgoingMessage } from '../../../src/engines/engine.js';

export class FakeConnection implements EngineConnection {
  closed = false;
  loggedOut = false;
  sent: OutgoingMessage[] = [];

  constructor(
    readonly events: EngineEvents,
    private readonly onEnd: (how: 'close' | 'logout') => Promise<void>,
  ) {}

  async send(message: OutgoingMessage) {
    this.sent.push(message);
  }
  async revoke() {}
  async checkNumber(number: string) {
    return { exists: true, jid: `${number}@s.whatsapp.net` };
  }
  async avatarUrl() {
    return null;
  }
  async close() {
    this.closed = true;
    await this.onEnd('close');
  }
  async logout() {
    this.loggedOut = true;
    await this.onEnd('logout');
  }
}

export class FakeEngine implements Engine {
  readonly name = 'sandbox' as const;
  readonly connections: FakeConnection[] = [];
  readonly forgotten: string[] = [];
  /** What happens right after each connect (default: nothing, the test drives it). */
  onConnect: (connection: FakeConnection, index: number) => void = () => undefined;
  /** Makes connect() fail instead. */
  connectError: Error | undefined;
  /** Called when a connection ends or credentials are forgotten, before it returns (to observe the store then). */
  onSideEffect: (what: string) => Promise<void> = async () => undefined;

  async connect(_deviceId: string, events: EngineEvents): Promise<EngineConnection> {
    if (this.connectError) throw this.connectError;
    const connection = new FakeConnection(events, (how) => this.onSideEffect(how));
    this.connections.push(connection);
    const index = this.connections.length - 1;
    setImmediate(() => this.onConnect(connection, index));
    return connection;
  }

  async forget(deviceId: string): Promise<void> {
    this.forgotten.push(deviceId);
    await this.onSideEffect('forget');
  }

  get last(): FakeConnection {
    return this.connections[this.connections.length - 1];
  }
}
