import { useEffect, useState } from 'preact/hooks';
import { describeError } from '../api/client.js';

/**
 * Loads with `load` now, whenever one of `deps` changes (a device's version: an event came), and when `reload`
 * is called. A failed load keeps what was shown and says why.
 */
export function useLoaded<T>(load: () => Promise<T>, deps: readonly unknown[]): [T | null, () => void, string] {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState('');
  const [nonce, setNonce] = useState(0);
  useEffect(() => {
    let stopped = false;
    load().then(
      (loaded) => {
        if (stopped) return;
        setData(loaded);
        setError('');
      },
      (err: unknown) => {
        if (!stopped) setError(describeError(err));
      },
    );
    return () => {
      stopped = true;
    };
  }, [...deps, nonce]);
  return [data, () => setNonce((n) => n + 1), error];
}
