import { describeError } from '../api/client.js';
import type { CloseSession } from '../api/types.js';
import { usePairingCode } from '../hooks/use-pairing-code.js';
import { useQrCode } from '../hooks/use-qr-code.js';
import type { DetailProps } from './detail-props.js';

export function Session({ api, device, notify }: DetailProps) {
  const state = device.session.state;
  const qrUrl = useQrCode(api, device.id, state);
  const { phone: pairPhone, setPhone: setPairPhone, pairing, ask } = usePairingCode(api, device.id, state, notify);

  // The state shows live above: a notice saying it again would go stale the moment it changes.
  const run = async (action: () => Promise<{ state: string }>) => {
    try {
      await action();
    } catch (err) {
      notify(describeError(err), 'error');
    }
  };
  const sandbox = device.engine === 'sandbox';
  const close = (body: CloseSession) => run(() => api.closeSession(device.id, body));
  const pair = async (event: Event) => {
    event.preventDefault();
    await ask(pairPhone);
  };

  return (
    <div class="card">
      <h3>Session</h3>
      <p>
        State:{' '}
        <strong class={`state state-${state}`} data-testid="session-state">
          {state}
        </strong>
        {device.session.phone && <> · linked to +{device.session.phone}</>}
      </p>
      <div class="buttons">
        <button type="button" onClick={() => run(() => api.openSession(device.id))}>
          Open session
        </button>
        <button type="button" class="secondary" onClick={() => close({})}>
          Close
        </button>
        <button
          type="button"
          class="secondary"
          onClick={() => confirm('Unlink the account and wipe its credentials?') && close({ logout: true })}
        >
          Log out
        </button>
      </div>
      {state === 'qr' && (
        <figure class="qr">
          {qrUrl ? (
            <img
              src={qrUrl}
              alt={
                sandbox
                  ? 'QR code of a sandbox device: the sandbox scans it (Sandbox controls → Scan)'
                  : 'QR code: scan it with the phone (WhatsApp → Linked devices)'
              }
              width={264}
              height={264}
            />
          ) : (
            <p>Loading the QR code…</p>
          )}
          <figcaption>
            {sandbox
              ? 'A sandbox device: no phone scans this. Press "Scan" under Sandbox controls to link a simulated phone.'
              : 'Scan with the phone: WhatsApp → Settings → Linked devices → Link a device. The code renews by itself.'}
          </figcaption>
        </figure>
      )}
      {state !== 'online' && (
        <form class="pair" onSubmit={pair} aria-labelledby="pair-title">
          <h4 id="pair-title">Or link with a phone number</h4>
          <label for="pair-phone">The account's phone number (international, digits)</label>
          <input
            id="pair-phone"
            inputMode="tel"
            required
            value={pairPhone}
            onInput={(e) => setPairPhone(e.currentTarget.value.replace(/\D/g, ''))}
            placeholder="4915112345678"
          />
          <button type="submit" class="secondary">
            Get a pairing code
          </button>
        </form>
      )}
      {state === 'pairing' && pairing && (
        <p class="pairing-code">
          {sandbox
            ? 'Enter this code under Sandbox controls → Pair (the simulated phone): '
            : 'Type this code on the phone (WhatsApp → Linked devices → Link with phone number): '}
          <strong data-testid="pairing-code">{pairing.code}</strong>
        </p>
      )}
    </div>
  );
}
