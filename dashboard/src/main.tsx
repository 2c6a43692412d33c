import { render } from 'preact';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, describeError, gatewayApi } from './api/client.js';
import { useDevices } from './hooks/use-devices.js';
import { useLiveStream } from './hooks/use-live-stream.js';
import { useNotice } from './hooks/use-notice.js';
import { CreateDevice } from './panels/create-device.js';
import { DeviceDetail } from './panels/device-detail.js';
import { DeviceList } from './panels/device-list.js';
import { Health } from './panels/health.js';
import { LiveEvents } from './panels/live-events.js';
import { Notice } from './panels/notice.js';
import { OverviewPanel } from './panels/overview.js';
import { SignIn } from './panels/sign-in.js';
import './style.css';

const KEY_STORAGE = 'dmg.adminKey';

function App() {
  const [key, setKey] = useState<string | null>(() => sessionStorage.getItem(KEY_STORAGE));
  const signOut = useCallback(() => {
    sessionStorage.removeItem(KEY_STORAGE);
    setKey(null);
  }, []);
  const signIn = useCallback((k: string) => {
    sessionStorage.setItem(KEY_STORAGE, k);
    setKey(k);
  }, []);
  if (!key) return <SignIn onKey={signIn} />;
  return <Dashboard adminKey={key} onSignOut={signOut} />;
}

function Dashboard({ adminKey, onSignOut }: { adminKey: string; onSignOut: () => void }) {
  const api = useMemo(() => gatewayApi(adminKey), [adminKey]);
  const { notice, notify, dismiss } = useNotice();
  const [selected, setSelected] = useState<string | null>(null);
  const devices = useDevices(api, (err) => {
    if (err instanceof ApiError && err.status === 401) onSignOut();
    else notify(describeError(err), 'error');
  });
  const stream = useLiveStream(adminKey, {
    onEvent: ({ envelope }) => devices.applyEvent(envelope),
    onStatus: (status) => {
      if (status === 'unauthorized') onSignOut();
      // Back after a drop: states that changed while away came with the resumed stream, new devices did not.
      if (status === 'live') void devices.reload();
    },
  });

  const device = devices.devices.find((d) => d.id === selected) ?? null;
  // A notice is about the device it was given for: another device's page starts without it.
  useEffect(dismiss, [selected]);

  return (
    <>
      <header>
        <h1>Device Messaging Gateway</h1>
        <Health adminKey={adminKey} />
        <p class="stream" aria-live="polite">
          Live updates: <strong data-testid="stream-status">{stream.status}</strong>
        </p>
        <button type="button" class="secondary" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <Notice notice={notice} onDismiss={dismiss} />
      <main>
        <section aria-labelledby="devices-title" class="devices">
          <h2 id="devices-title">Devices</h2>
          <button type="button" class="secondary" aria-pressed={selected === null} onClick={() => setSelected(null)}>
            Overview
          </button>
          <DeviceList devices={devices.devices} selected={selected} onSelect={setSelected} />
          <CreateDevice
            api={api}
            notify={notify}
            onCreated={(d) => {
              devices.added(d);
              setSelected(d.id);
            }}
          />
          <LiveEvents recent={stream.recent} />
        </section>
        {!device && <OverviewPanel api={api} version={stream.total} onSelect={setSelected} />}
        {device && (
          <DeviceDetail
            key={device.id}
            api={api}
            device={device}
            version={stream.versions[device.id] ?? 0}
            notify={notify}
            onChanged={devices.reload}
            onDeleted={() => {
              setSelected(null);
              void devices.reload();
            }}
          />
        )}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
