import { useEffect, useRef } from 'preact/hooks';
import type { GatewayApi } from '../api/client.js';
import type { Overview } from '../api/types.js';
import { useLoaded } from './use-loaded.js';

/** How often the overview is read again while nothing moves it (outbox and delivery counts are no stream events). */
const REFRESH_MS = 10_000;
/** Events move it at most this often: a busy gateway sends thousands a second. */
const AFTER_EVENTS_MS = 1_000;

/** GET /overview, again a moment after events came (`version`) and every REFRESH_MS. */
export function useOverview(api: GatewayApi, version: number): [Overview | null, string] {
  const [overview, reload, error] = useLoaded(() => api.overview(), [api]);
  const soon = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => {
    if (version === 0 || soon.current !== undefined) return;
    soon.current = setTimeout(() => {
      soon.current = undefined;
      reload();
    }, AFTER_EVENTS_MS);
  }, [version]);
  useEffect(() => {
    const timer = setInterval(reload, REFRESH_MS);
    return () => {
      clearInterval(timer);
      clearTimeout(soon.current);
    };
  }, [api]);
  return [overview, error];
}
