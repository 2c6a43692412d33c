import { useCallback, useEffect, useState } from 'preact/hooks';
import type { GatewayApi } from '../api/client.js';
import type { Device, Envelope } from '../api/types.js';
import { useLatest } from './use-latest.js';

const PAGE = 500;

/** Every device, all pages of GET /devices; session states kept current from the stream's events. */
export function useDevices(api: GatewayApi, onError: (error: unknown) => void) {
  const [devices, setDevices] = useState<Device[]>([]);
  const failed = useLatest(onError);

  const reload = useCallback(async () => {
    try {
      const all: Device[] = [];
      let cursor: string | null = null;
      do {
        const page = await api.listDevices(PAGE, cursor);
        all.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
      setDevices(all);
    } catch (err) {
      failed.current(err);
    }
  }, [api]);

  useEffect(() => {
    void reload();
  }, [reload]);

  const applyEvent = useCallback((envelope: Envelope) => {
    if (envelope.event !== 'session.state') return;
    const { state, phone } = envelope.data;
    setDevices((list) =>
      list.map((d) => (d.id === envelope.deviceId ? { ...d, session: { state, ...(phone ? { phone } : {}) } } : d)),
    );
  }, []);

  const added = useCallback(
    (device: Device) => setDevices((list) => [...list.filter((d) => d.id !== device.id), device]),
    [],
  );

  return { devices, reload, applyEvent, added };
}
