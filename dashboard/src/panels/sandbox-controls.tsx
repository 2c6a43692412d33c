import { useState } from 'preact/hooks';
import { PRESENCE_STATES } from '../../../src/messages/message-events.js';
import { describeError } from '../api/client.js';
import type { SandboxPresence } from '../api/types.js';
import type { DetailProps } from './detail-props.js';

type PresenceState = SandboxPresence['state'];

/**
 * The sandbox's simulated phone and contacts (POST /sandbox/devices/:id/…): link the device without a phone,
 * and make the network write, call or type to it. Only on sandbox devices.
 */
export function SandboxControls({ api, device, notify, bump }: DetailProps) {
  const [phone, setPhone] = useState('4915100001111');
  const [code, setCode] = useState('');
  const [from, setFrom] = useState('4915100002222');
  const [body, setBody] = useState('Hello from the sandbox');
  const [presence, setPresence] = useState<PresenceState>('typing');
  const [video, setVideo] = useState(false);
  const state = device.session.state;

  const run = async (action: () => Promise<unknown>, done: string) => {
    try {
      await action();
      notify(done);
      bump();
    } catch (err) {
      notify(describeError(err), 'error');
    }
  };
  const digits = (value: string) => value.replace(/\D/g, '');
  const submit = (action: () => Promise<unknown>, done: string) => (event: Event) => {
    event.preventDefault();
    void run(action, done);
  };

  return (
    <div class="card sandbox" aria-labelledby="sandbox-title">
      <h3 id="sandbox-title">Sandbox controls</h3>
      <p class="hint">The simulated network: no phone and no WhatsApp account involved.</p>
      {state === 'qr' && (
        <form
          onSubmit={submit(
            () => api.sandboxScan(device.id, { phone: digits(phone) }),
            'The sandbox scanned the QR code.',
          )}
        >
          <label for="sandbox-phone">The simulated phone's number</label>
          <input
            id="sandbox-phone"
            inputMode="tel"
            required
            value={phone}
            onInput={(e) => setPhone(e.currentTarget.value)}
          />
          <button type="submit">Scan</button>
        </form>
      )}
      {state === 'pairing' && (
        <form
          onSubmit={submit(() => api.sandboxPair(device.id, { code: code.trim() }), 'The sandbox entered the code.')}
        >
          <label for="sandbox-code">The pairing code shown above</label>
          <input
            id="sandbox-code"
            required
            value={code}
            onInput={(e) => setCode(e.currentTarget.value)}
            placeholder="ABCD-EFGH"
          />
          <button type="submit">Pair</button>
        </form>
      )}
      {state === 'online' ? (
        <>
          <label for="sandbox-from">A contact's number</label>
          <input
            id="sandbox-from"
            inputMode="tel"
            required
            value={from}
            onInput={(e) => setFrom(e.currentTarget.value)}
          />
          <form
            onSubmit={submit(
              () => api.sandboxInbound(device.id, { from: digits(from), body }),
              'The contact wrote to the device.',
            )}
          >
            <label for="sandbox-body">Message from the contact</label>
            <textarea
              id="sandbox-body"
              required
              rows={2}
              value={body}
              onInput={(e) => setBody(e.currentTarget.value)}
            />
            <button type="submit">Receive message</button>
          </form>
          <div class="buttons">
            <label class="check">
              <input type="checkbox" checked={video} onChange={(e) => setVideo(e.currentTarget.checked)} /> video call
            </label>
            <button
              type="button"
              class="secondary"
              onClick={() =>
                run(() => api.sandboxCall(device.id, { from: digits(from), isVideo: video }), 'The contact is calling.')
              }
            >
              Call the device
            </button>
          </div>
          <div class="buttons">
            <label for="sandbox-presence">Presence</label>
            <select
              id="sandbox-presence"
              value={presence}
              onChange={(e) => setPresence(e.currentTarget.value as PresenceState)}
            >
              {PRESENCE_STATES.map((value) => (
                <option key={value} value={value}>
                  {value}
                </option>
              ))}
            </select>
            <button
              type="button"
              class="secondary"
              onClick={() =>
                run(
                  () => api.sandboxPresence(device.id, { from: digits(from), state: presence }),
                  `The contact is ${presence}.`,
                )
              }
            >
              Send presence
            </button>
          </div>
        </>
      ) : (
        state !== 'qr' && state !== 'pairing' && <p>Open the session to link the simulated phone.</p>
      )}
    </div>
  );
}
