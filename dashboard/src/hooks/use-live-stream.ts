import { useEffect, useState } from 'preact/hooks';
import { type StreamStatus, listen } from '../api/stream.js';
import type { StreamEvent } from '../api/types.js';
import { useLatest } from './use-latest.js';

const RECENT = 30;

/**
 * GET /stream while signed in: its status, the latest events, per device a version bumped by each of its events
 * (the device's panels reload when it changes), and how many events came in all (the overview's).
 */
export function useLiveStream(
  key: string,
  handlers: { onEvent: (event: StreamEvent) => void; onStatus: (status: StreamStatus) => void },
) {
  const [status, setStatus] = useState<StreamStatus>('connecting');
  const [recent, setRecent] = useState<StreamEvent[]>([]);
  const [versions, setVersions] = useState<Readonly<Record<string, number>>>({});
  const [total, setTotal] = useState(0);
  const latest = useLatest(handlers);

  useEffect(
    () =>
      listen(
        key,
        (event) => {
          const { deviceId } = event.envelope;
          setRecent((list) => [event, ...list].slice(0, RECENT));
          setVersions((v) => ({ ...v, [deviceId]: (v[deviceId] ?? 0) + 1 }));
          setTotal((n) => n + 1);
          latest.current.onEvent(event);
        },
        (next) => {
          setStatus(next);
          latest.current.onStatus(next);
        },
      ),
    [key],
  );

  return { status, recent, versions, total };
}
