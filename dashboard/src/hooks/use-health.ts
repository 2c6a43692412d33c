import { useEffect, useState } from 'preact/hooks';
import { fetchHealth } from '../api/client.js';
import type { Health } from '../api/types.js';

const EVERY_MS = 10_000;

/** GET /health now and every 10 s: the report, or `unreachable` when the last try got none. */
export function useHealth(adminKey: string): { health: Health | null; unreachable: boolean } {
  const [health, setHealth] = useState<Health | null>(null);
  const [unreachable, setUnreachable] = useState(false);
  useEffect(() => {
    const load = () =>
      fetchHealth(adminKey).then(
        (report) => {
          setHealth(report);
          setUnreachable(false);
        },
        () => setUnreachable(true),
      );
    void load();
    const timer = setInterval(() => void load(), EVERY_MS);
    return () => clearInterval(timer);
  }, [adminKey]);
  return { health, unreachable };
}
