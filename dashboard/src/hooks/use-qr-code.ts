import { useEffect, useRef, useState } from 'preact/hooks';
import type { GatewayApi } from '../api/client.js';
import type { SessionState } from '../api/types.js';

const EVERY_MS = 3000;

/**
 * While the session shows a QR code, follows its renewals: the image is fetched with the key and shown from a
 * blob URL (the page's CSP allows images from blob:). Null while there is none to show.
 */
export function useQrCode(api: GatewayApi, deviceId: string, state: SessionState): string | null {
  const [url, setUrl] = useState<string | null>(null);
  const lastCode = useRef<string | null>(null);
  useEffect(() => {
    if (state !== 'qr') {
      lastCode.current = null;
      setUrl((old) => (old && URL.revokeObjectURL(old), null));
      return;
    }
    let stopped = false;
    const refresh = async () => {
      try {
        const { qr } = await api.qr(deviceId);
        if (stopped || qr === lastCode.current) return;
        const blob = await api.qrImage(deviceId);
        if (stopped) return;
        lastCode.current = qr;
        const next = URL.createObjectURL(blob);
        setUrl((old) => (old && URL.revokeObjectURL(old), next));
      } catch {
        // between codes or no longer qr: the next round or the next state says
      }
    };
    void refresh();
    const timer = setInterval(() => void refresh(), EVERY_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [state, api, deviceId]);
  return url;
}
