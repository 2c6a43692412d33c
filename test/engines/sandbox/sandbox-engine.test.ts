import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EngineConnection, EngineEvents } from '../../../src/engines/engine.js';
import { SandboxEngine } from '../../../src/engines/sandbox/sandbox-engine.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { tempDir } from '../../support/temp-dir.js';
import { eventually } from '../../support/eventually.js';

type Heard = { kind: string; args: unknown[] };

/** EngineEvents that write down what they are told. */
function recorder(): { events: EngineEvents; heard: Heard[]; of: (kind: string) => unknown[][] } {
  const heard: Heard[] = [];
  const note =
    (kind: string) =>
    (...args: unknown[]) =>
      void heard.push({ kind, args });
  const report =
    (kind: string) =>
    async (...args: unknown[]) =>
      void heard.push({ kind, args });
  return {
    heard,
    of: (kind) => heard.filter((h) => h.kind === kind).map((h) => h.args),
    events: {
      qr: note('qr'),
      online: note('online'),
      disconnected: note('disconnected'),
      inbound: report('inbound'),
      receipt: report('receipt'),
      contacts: report('contacts'),
    },
  };
}

describe('the sandbox engine at its port', () => {
  let store: SqliteEventStore;
  let engine: SandboxEngine;
  const connections: EngineConnection[] = [];
  const connect = async (deviceId: string, events: EngineEvents) => {
    const connection = await engine.connect(deviceId, events);
    connections.push(connection);
    return connection;
  };

  /** Connects another device without credentials and waits until its code was renewed `times` times. */
  const codesRenewed = async (deviceId: string, times: number) => {
    const waiting = recorder();
    await connect(deviceId, waiting.events);
    await eventually(() => waiting.of('qr').length > times, `${deviceId}'s code renewed ${times} times`);
  };

  beforeEach(() => {
    store = new SqliteEventStore(join(tempDir('dmg-sandbox-'), 'events.sqlite'));
    engine = new SandboxEngine(store, { deliveredDelayMs: 1, readDelayMs: 1, qrTtlMs: 30 });
  });
  afterEach(async () => {
    for (const connection of connections.splice(0)) await connection.close();
    await engine.close();
    await store.close();
  });

  it('shows sandbox: codes, renewed until scanned, then asks for a restart; the restart logs in', async () => {
    const first = recorder();
    await connect('d1', first.events);
    const codes = await eventually(() => (first.of('qr').length >= 3 ? first.of('qr') : undefined), 'three codes');
    expect(new Set(codes.map(([code]) => code)).size).toBe(codes.length);
    for (const [code, expiresAt] of codes) {
      expect(code).toMatch(/^sandbox:[A-Za-z0-9_-]{20,}$/);
      expect(expiresAt).toBeInstanceOf(Date);
    }
    expect(await engine.scan('d1', '4915100000001')).toBe('paired');
    expect(first.of('disconnected')).toEqual([['restart_required', expect.any(String)]]);
    const shown = first.of('qr').length;
    // No codes once scanned: meanwhile a device still waiting shows its code renewed three times.
    await codesRenewed('d1-waiting', 3);
    expect(first.of('qr')).toHaveLength(shown);

    const second = recorder();
    await connect('d1', second.events);
    const [[account]] = await eventually(
      () => (second.of('online').length ? second.of('online') : undefined),
      'online',
    );
    expect(account).toEqual({ phone: '4915100000001', jid: '4915100000001@s.whatsapp.net' });
    expect(second.of('qr')).toEqual([]);
  });

  it('keeps credentials across engines on the same store, and forgets them on forget', async () => {
    const first = recorder();
    await connect('d2', first.events);
    await eventually(() => (first.of('qr').length ? true : undefined), 'a code');
    await engine.scan('d2', '4915100000002');

    const restarted = new SandboxEngine(store, { deliveredDelayMs: 1, readDelayMs: 1 });
    const again = recorder();
    connections.push(await restarted.connect('d2', again.events));
    await eventually(() => (again.of('online').length ? true : undefined), 'online after a restart');

    await restarted.forget('d2');
    const fresh = recorder();
    connections.push(await restarted.connect('d2', fresh.events));
    await eventually(() => (fresh.of('qr').length ? true : undefined), 'a code after forget');
    await restarted.close();
  });

  it('a second connection of the same device pushes the first out (connection_replaced)', async () => {
    const first = recorder();
    await connect('d3', first.events);
    await eventually(() => (first.of('qr').length ? true : undefined), 'a code');
    await connect('d3', recorder().events);
    expect(first.of('disconnected')).toEqual([['connection_replaced', expect.any(String)]]);
  });

  it('the phone unlinking while offline is told at the next connection', async () => {
    const first = recorder();
    const connection = await connect('d4', first.events);
    await eventually(() => (first.of('qr').length ? true : undefined), 'a code');
    await engine.scan('d4', '4915100000004');
    await connection.close();
    expect(await engine.logout('d4')).toBe('unlinked');
    const next = recorder();
    await connect('d4', next.events);
    await eventually(() => (next.of('disconnected').length ? true : undefined), 'told');
    expect(next.of('disconnected')).toEqual([['logged_out', expect.any(String)]]);
    expect(await engine.logout('d4')).toBe('not_linked');
  });

  it('close ends the connection quietly: no more codes, no callbacks', async () => {
    const first = recorder();
    const connection = await connect('d5', first.events);
    await eventually(() => (first.of('qr').length ? true : undefined), 'a code');
    await connection.close();
    const heard = first.heard.length;
    await codesRenewed('d5-waiting', 3);
    expect(first.heard).toHaveLength(heard);
    expect(await engine.scan('d5', '4915100000005')).toBe('no_qr');
  });
});
