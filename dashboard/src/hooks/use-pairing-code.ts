import { useEffect, useState } from 'preact/hooks';
import { type GatewayApi, describeError } from '../api/client.js';
import type { SessionState } from '../api/types.js';
import type { Notify } from './use-notice.js';

/**
 * Linking by a code typed on the phone instead of a QR: the code is asked for again once it expires (the answer
 * is the code on show), as long as the session is pairing.
 */
export function usePairingCode(api: GatewayApi, deviceId: string, state: SessionState, notify: Notify) {
  const [phone, setPhone] = useState('');
  const [pairing, setPairing] = useState<{ code: string; expiresAt: string } | null>(null);

  const ask = async (digits: string): Promise<boolean> => {
    try {
      const answer = await api.pair(deviceId, { phone: digits });
      setPairing({ code: answer.pairingCode, expiresAt: answer.expiresAt });
      return true;
    } catch (err) {
      notify(describeError(err), 'error');
      return false;
    }
  };

  useEffect(() => {
    if (state !== 'pairing') {
      if (state === 'online' || state === 'closed' || state === 'logged_out') setPairing(null);
      return;
    }
    if (!pairing || phone === '') return;
    const timer = setTimeout(() => void ask(phone), Math.max(1_000, Date.parse(pairing.expiresAt) - Date.now()));
    return () => clearTimeout(timer);
  }, [state, pairing, phone]);

  return { phone, setPhone, pairing, ask };
}
