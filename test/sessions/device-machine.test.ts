import { describe, expect, it } from 'vitest';
import { transition } from 'xstate';
import { type DeviceContext, type DeviceMachineEvent, createDeviceMachine } from '../../src/sessions/device-machine.js';
import { RUNNING_STATES } from '../../src/sessions/session-record.js';
import { SESSION_STATES } from '../../src/sessions/session-events.js';

const settings = { baseDelayMs: 1_000, maxDelayMs: 60_000, jitter: 0.2, maxAttempts: 3 };
const machine = createDeviceMachine(settings, () => 0.5);
const account = { phone: '4915100000042', jid: '4915100000042@s.whatsapp.net' };

const EVENTS: DeviceMachineEvent[] = [
  { type: 'OPEN' },
  { type: 'CLOSE', logout: false },
  { type: 'CLOSE', logout: true },
  { type: 'REBOOT' },
  { type: 'RESUME' },
  { type: 'RETRY' },
  { type: 'ENGINE.QR', code: 'c', expiresAt: new Date(0).toISOString() },
  { type: 'ENGINE.PAIRING_CODE', code: 'ABCD-EFGH', expiresAt: new Date(0).toISOString() },
  { type: 'ENGINE.ONLINE', account },
  { type: 'ENGINE.DISCONNECTED', kind: 'restart_required', detail: 'd' },
  { type: 'ENGINE.DISCONNECTED', kind: 'logged_out', detail: 'd' },
  { type: 'ENGINE.DISCONNECTED', kind: 'connection_replaced', detail: 'd' },
  { type: 'ENGINE.DISCONNECTED', kind: 'account_restricted', detail: 'd' },
  { type: 'ENGINE.DISCONNECTED', kind: 'transient', detail: 'd' },
  { type: 'ENGINE.FAILED', error: { code: 'engine_error', message: 'm' } },
];
const CONTEXTS: DeviceContext[] = [
  { attempts: 0 },
  { attempts: 0, phone: account.phone },
  { attempts: settings.maxAttempts, phone: account.phone },
];

function step(state: string, context: DeviceContext, event: DeviceMachineEvent) {
  const [next, actions] = transition(machine, machine.resolveState({ value: state, context }), event);
  return {
    state: next.value as string,
    context: next.context,
    actions: actions.map((a) => ({ type: a.type, params: a.params as Record<string, unknown> | undefined })),
  };
}

describe('the device machine', () => {
  it('records every change of state exactly once, and nothing else besides re-entries', () => {
    for (const state of SESSION_STATES) {
      for (const context of CONTEXTS) {
        for (const event of EVENTS) {
          const result = step(state, context, event);
          const records = result.actions.filter((a) => a.type === 'record');
          const label = `${state} + ${event.type}${'kind' in event ? `(${event.kind})` : ''} (attempts ${context.attempts})`;
          if (result.state !== state) expect(records, label).toHaveLength(1);
          // Besides re-entries, a failed try while reconnecting is recorded in the same state.
          else if (records.length > 0 && event.type !== 'ENGINE.DISCONNECTED')
            expect(['REBOOT', 'RESUME'], label).toContain(event.type);
          else if (records.length > 0)
            expect([state, records[0]?.params?.reason], label).toEqual(['reconnecting', 'attempt_failed']);
          expect(records.length, label).toBeLessThanOrEqual(1);
          expect(typeof records[0]?.params?.reason === 'string' || records.length === 0, label).toBe(true);
        }
      }
    }
  });

  it('a pairing code moves a session showing QR codes to pairing; renewals and QR codes keep it there; the restart after entry connects', () => {
    const code = (c: string) => ({
      type: 'ENGINE.PAIRING_CODE' as const,
      code: c,
      expiresAt: new Date(0).toISOString(),
    });
    const paired = step('qr', { attempts: 0 }, code('ABCD-EFGH'));
    expect(paired).toMatchObject({
      state: 'pairing',
      context: { pairing: { code: 'ABCD-EFGH' } },
      actions: [{ type: 'record', params: { reason: 'pairing_code_issued' } }],
    });
    expect(step('pairing', paired.context, code('WXYZ-2345'))).toMatchObject({
      state: 'pairing',
      context: { pairing: { code: 'WXYZ-2345' } },
      actions: [],
    });
    expect(
      step('pairing', paired.context, { type: 'ENGINE.QR', code: 'q', expiresAt: new Date(0).toISOString() }),
    ).toMatchObject({ state: 'pairing', actions: [] });
    expect(
      step('pairing', paired.context, { type: 'ENGINE.DISCONNECTED', kind: 'restart_required', detail: 'paired' })
        .state,
    ).toBe('connecting');
    expect(step('online', { attempts: 0, phone: account.phone }, code('ABCD-EFGH'))).toMatchObject({
      state: 'online',
      actions: [],
    });
    expect(RUNNING_STATES.has('pairing')).toBe(true);
  });

  it('the restart after a scan or an entered code links the session, however many tries failed before it', () => {
    const restart = {
      type: 'ENGINE.DISCONNECTED' as const,
      kind: 'restart_required' as const,
      detail: 'restart required (515)',
    };
    for (const state of ['qr', 'pairing']) {
      const exhausted = { attempts: settings.maxAttempts, lastError: { code: 'dns_failure', message: 'm' } };
      expect(step(state, exhausted, restart), state).toMatchObject({
        state: 'connecting',
        context: { attempts: 0, lastError: undefined },
        actions: [{ type: 'record', params: { reason: 'restart_required' } }, { type: 'connect' }],
      });
    }
    // While connecting, a restart is still one more try, and too many fail.
    expect(step('connecting', { attempts: settings.maxAttempts }, restart).state).toBe('failed');
  });

  it('an account WhatsApp refuses fails at once, saying so, whatever the tries so far', () => {
    for (const state of ['connecting', 'qr', 'online', 'reconnecting']) {
      const result = step(
        state,
        { attempts: 0, phone: account.phone },
        { type: 'ENGINE.DISCONNECTED', kind: 'account_restricted', detail: 'forbidden (403): Connection Failure' },
      );
      expect(result, state).toMatchObject({ state: 'failed', context: { lastError: { code: 'account_restricted' } } });
    }
  });

  it('stopped states ignore the engine, the timer and RESUME', () => {
    for (const state of ['closed', 'logged_out', 'failed']) {
      for (const event of EVENTS.filter(
        (e) => e.type.startsWith('ENGINE.') || e.type === 'RETRY' || e.type === 'RESUME',
      )) {
        expect(step(state, { attempts: 0 }, event), `${state} + ${event.type}`).toMatchObject({ state, actions: [] });
      }
    }
  });

  it('open and reboot start a fresh attempt from every stopped state', () => {
    for (const state of ['closed', 'logged_out', 'failed']) {
      for (const type of ['OPEN', 'REBOOT'] as const) {
        const result = step(state, { attempts: 2, lastError: { code: 'x', message: 'y' } }, { type });
        expect(result.state).toBe('connecting');
        expect(result.context.attempts).toBe(0);
        expect(result.actions.map((a) => a.type)).toEqual(['record', 'connect']);
      }
    }
  });

  it('open changes nothing while running', () => {
    for (const state of RUNNING_STATES)
      expect(step(state, { attempts: 1 }, { type: 'OPEN' })).toMatchObject({ state, actions: [] });
  });

  it("a transient loss schedules a retry with the policy's delay; too many fail", () => {
    const lost = step(
      'online',
      { attempts: 0, phone: account.phone },
      { type: 'ENGINE.DISCONNECTED', kind: 'transient', detail: 'keepalive' },
    );
    expect(lost.state).toBe('reconnecting');
    expect(lost.actions).toContainEqual({ type: 'scheduleRetry', params: { delayMs: 1_000 } });
    const again = step(
      'reconnecting',
      { attempts: 2 },
      { type: 'ENGINE.DISCONNECTED', kind: 'transient', detail: 'timeout' },
    );
    expect(again).toMatchObject({ state: 'reconnecting', context: { attempts: 3 } });
    expect(again.actions).toContainEqual({ type: 'scheduleRetry', params: { delayMs: 4_000 } });
    const exhausted = step(
      'reconnecting',
      { attempts: 3 },
      { type: 'ENGINE.DISCONNECTED', kind: 'transient', detail: 'timeout' },
    );
    expect(exhausted.state).toBe('failed');
    expect(exhausted.context.lastError?.code).toBe('too_many_attempts');
    expect(exhausted.actions.map((a) => a.type)).toEqual(['cancelRetry', 'record', 'disconnect']);
  });

  it('a failed try keeps its classified error; a fresh start forgets it', () => {
    const failedConnect = step(
      'connecting',
      { attempts: 0 },
      { type: 'ENGINE.DISCONNECTED', kind: 'transient', detail: 'getaddrinfo ENOTFOUND web.whatsapp.com' },
    );
    expect(failedConnect).toMatchObject({
      state: 'reconnecting',
      context: { attempts: 1, lastError: { code: 'dns_failure' } },
    });
    expect(failedConnect.actions[0]).toEqual({ type: 'record', params: { reason: 'connect_failed' } });
    const again = step('reconnecting', failedConnect.context, {
      type: 'ENGINE.DISCONNECTED',
      kind: 'transient',
      detail: 'status_405 (405): Connection Failure',
    });
    expect(again.context).toMatchObject({ attempts: 2, lastError: { code: 'client_outdated' } });
    expect(again.actions.map((a) => a.type)).toEqual(['record', 'scheduleRetry']);
    expect(step('reconnecting', again.context, { type: 'REBOOT' }).context.lastError).toBeUndefined();
  });

  it('logging out wipes the credentials and forgets the phone', () => {
    const byUser = step('online', { attempts: 0, phone: account.phone, account }, { type: 'CLOSE', logout: true });
    expect(byUser.state).toBe('logged_out');
    expect(byUser.context.phone).toBeUndefined();
    expect(byUser.actions.map((a) => a.type)).toEqual(['record', 'logout']);
    const byPhone = step(
      'online',
      { attempts: 0, phone: account.phone },
      { type: 'ENGINE.DISCONNECTED', kind: 'logged_out', detail: 'd' },
    );
    expect(byPhone.actions.map((a) => a.type)).toEqual(['record', 'forget']);
  });

  it('is pure: the same input gives the same output and the input is not changed', () => {
    const before = machine.resolveState({ value: 'online', context: { attempts: 0, phone: account.phone } });
    const event: DeviceMachineEvent = { type: 'ENGINE.DISCONNECTED', kind: 'transient', detail: 'x' };
    const [a, actionsA] = transition(machine, before, event);
    const [b, actionsB] = transition(machine, before, event);
    expect(a.value).toEqual(b.value);
    expect(a.context).toEqual(b.context);
    expect(actionsA.map((x) => [x.type, x.params])).toEqual(actionsB.map((x) => [x.type, x.params]));
    expect(before.value).toBe('online');
    expect(before.context.attempts).toBe(0);
  });
});
