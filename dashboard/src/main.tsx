import { render } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type Envelope, type StreamStatus, call, fetchBlob, listen } from './api.js';
import './style.css';

const KEY_STORAGE = 'dmg.adminKey';

interface Device {
  id: string;
  name: string;
  engine: string;
  createdAt: string;
  session: { state: string; phone?: string };
}

type Notify = (text: string, kind?: 'ok' | 'error') => void;

const describe = (error: unknown) => (error instanceof ApiError ? `${error.message} (${error.code})` : String(error));
const enc = encodeURIComponent;

function App() {
  const [key, setKey] = useState<string | null>(() => sessionStorage.getItem(KEY_STORAGE));
  const signOut = useCallback(() => {
    sessionStorage.removeItem(KEY_STORAGE);
    setKey(null);
  }, []);
  if (!key) return <SignIn onKey={(k) => (sessionStorage.setItem(KEY_STORAGE, k), setKey(k))} />;
  return <Dashboard adminKey={key} onSignOut={signOut} />;
}

function SignIn({ onKey }: { onKey: (key: string) => void }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      await call(value.trim(), 'GET', '/devices?limit=1');
      onKey(value.trim());
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'That key is not the admin key.' : describe(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>Device Messaging Gateway</h1>
      <form onSubmit={submit}>
        <label for="admin-key">Admin key</label>
        <input
          id="admin-key"
          type="password"
          autocomplete="current-password"
          required
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
        />
        <p class="hint">Kept in this tab only (session storage), sent in a header, never in a URL.</p>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}

function Dashboard({ adminKey, onSignOut }: { adminKey: string; onSignOut: () => void }) {
  const [devices, setDevices] = useState<Device[]>([]);
  const [selected, setSelected] = useState<string | null>(null);
  const [stream, setStream] = useState<StreamStatus>('connecting');
  const [recent, setRecent] = useState<Array<{ position: number; envelope: Envelope }>>([]);
  /** Bumped on every event of a device: its panels reload. */
  const [versions, setVersions] = useState<Record<string, number>>({});
  const [notice, setNotice] = useState<{ text: string; kind: 'ok' | 'error' } | null>(null);
  const notify: Notify = useCallback((text, kind = 'ok') => setNotice({ text, kind }), []);

  const loadDevices = useCallback(async () => {
    try {
      const all: Device[] = [];
      let cursor: string | null = null;
      do {
        const page: { items: Device[]; nextCursor: string | null } = await call(
          adminKey,
          'GET',
          `/devices?limit=500${cursor ? `&cursor=${enc(cursor)}` : ''}`,
        );
        all.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
      setDevices(all);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) onSignOut();
      else notify(describe(err), 'error');
    }
  }, [adminKey]);

  useEffect(() => {
    void loadDevices();
    return listen(
      adminKey,
      ({ position, envelope }) => {
        setRecent((list) => [{ position, envelope }, ...list].slice(0, 30));
        setVersions((v) => ({ ...v, [envelope.deviceId]: (v[envelope.deviceId] ?? 0) + 1 }));
        if (envelope.event === 'session.state') {
          setDevices((list) =>
            list.map((d) =>
              d.id === envelope.deviceId
                ? {
                    ...d,
                    session: {
                      state: envelope.data.state,
                      ...(envelope.data.phone ? { phone: envelope.data.phone } : {}),
                    },
                  }
                : d,
            ),
          );
        }
      },
      (status) => {
        setStream(status);
        if (status === 'unauthorized') onSignOut();
        // Back after a drop: states that changed while away came with the resumed stream, new devices did not.
        if (status === 'live') void loadDevices();
      },
    );
  }, [adminKey]);

  const device = devices.find((d) => d.id === selected) ?? null;

  return (
    <>
      <header>
        <h1>Device Messaging Gateway</h1>
        <Health adminKey={adminKey} />
        <p class="stream" aria-live="polite">
          Live updates: <strong data-testid="stream-status">{stream}</strong>
        </p>
        <button type="button" class="secondary" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      {notice && (
        <p role={notice.kind === 'error' ? 'alert' : 'status'} class={`notice ${notice.kind}`}>
          {notice.text}{' '}
          <button type="button" class="link" onClick={() => setNotice(null)} aria-label="Dismiss message">
            ×
          </button>
        </p>
      )}
      <main>
        <section aria-labelledby="devices-title" class="devices">
          <h2 id="devices-title">Devices</h2>
          <DeviceList devices={devices} selected={selected} onSelect={setSelected} />
          <CreateDevice
            adminKey={adminKey}
            notify={notify}
            onCreated={(d) => (setDevices((list) => [...list.filter((x) => x.id !== d.id), d]), setSelected(d.id))}
          />
          <LiveEvents recent={recent} />
        </section>
        {device && (
          <DeviceDetail
            key={device.id}
            adminKey={adminKey}
            device={device}
            version={versions[device.id] ?? 0}
            notify={notify}
            onChanged={loadDevices}
            onDeleted={() => (setSelected(null), void loadDevices())}
          />
        )}
      </main>
    </>
  );
}

function Health({ adminKey }: { adminKey: string }) {
  const [health, setHealth] = useState<{
    status: string;
    version: string;
    uptimeSeconds: number;
    store: { kind: string; ok: boolean };
  } | null>(null);
  const [error, setError] = useState(false);
  useEffect(() => {
    const load = () =>
      fetch('/health')
        .then((r) => r.json())
        .then((h) => (setHealth(h), setError(false)))
        .catch(() => setError(true));
    void load();
    const timer = setInterval(load, 10_000);
    return () => clearInterval(timer);
  }, [adminKey]);
  if (error) return <p class="health bad">Health: unreachable</p>;
  if (!health) return <p class="health">Health: …</p>;
  return (
    <p class={`health ${health.status === 'ok' ? 'good' : 'bad'}`} data-testid="health">
      Health: <strong>{health.status}</strong> · v{health.version} · {health.store.kind} store{' '}
      {health.store.ok ? 'ok' : 'down'} · up {formatUptime(health.uptimeSeconds)}
    </p>
  );
}

const formatUptime = (s: number) =>
  s < 120 ? `${Math.round(s)} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`;

function DeviceList({
  devices,
  selected,
  onSelect,
}: {
  devices: Device[];
  selected: string | null;
  onSelect: (id: string) => void;
}) {
  if (devices.length === 0) return <p>No devices yet.</p>;
  return (
    <ul class="device-list">
      {devices.map((d) => (
        <li key={d.id}>
          <button
            type="button"
            aria-pressed={d.id === selected}
            onClick={() => onSelect(d.id)}
            data-testid={`device-${d.id}`}
          >
            <span class="name">{d.name}</span> <span class="id">{d.id}</span> <span class="engine">{d.engine}</span>
            <span class={`state state-${d.session.state}`} data-testid={`state-${d.id}`}>
              {d.session.state}
            </span>
            {d.session.phone && <span class="phone">+{d.session.phone}</span>}
          </button>
        </li>
      ))}
    </ul>
  );
}

function CreateDevice({
  adminKey,
  notify,
  onCreated,
}: {
  adminKey: string;
  notify: Notify;
  onCreated: (device: Device) => void;
}) {
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [engine, setEngine] = useState('sandbox');
  const [created, setCreated] = useState<{ id: string; key: string } | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      const device = await call<Device & { deviceKey: string }>(adminKey, 'POST', '/devices', {
        ...(id.trim() ? { id: id.trim() } : {}),
        name: name.trim(),
        engine,
      });
      const { deviceKey, ...rest } = device;
      setCreated({ id: device.id, key: deviceKey });
      setId('');
      setName('');
      onCreated(rest);
    } catch (err) {
      notify(describe(err), 'error');
    }
  };
  return (
    <>
      <form class="create" onSubmit={submit} aria-labelledby="create-title">
        <h3 id="create-title">New device</h3>
        <label for="new-id">Id (optional)</label>
        <input
          id="new-id"
          value={id}
          pattern="[A-Za-z0-9][A-Za-z0-9_\-]{0,63}"
          onInput={(e) => setId(e.currentTarget.value)}
        />
        <label for="new-name">Name</label>
        <input id="new-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <label for="new-engine">Engine</label>
        <select id="new-engine" value={engine} onChange={(e) => setEngine(e.currentTarget.value)}>
          <option value="sandbox">sandbox (simulated)</option>
          <option value="baileys">baileys (WhatsApp)</option>
        </select>
        <button type="submit">Create device</button>
      </form>
      {created && (
        <div class="once" role="status" data-testid="new-key">
          <p>
            Device <strong>{created.id}</strong> created. Its key is shown only this once; store it now:
          </p>
          <code>{created.key}</code>
          <button type="button" class="secondary" onClick={() => void navigator.clipboard?.writeText(created.key)}>
            Copy key
          </button>
          <button type="button" class="link" onClick={() => setCreated(null)}>
            I stored it
          </button>
        </div>
      )}
    </>
  );
}

function LiveEvents({ recent }: { recent: Array<{ position: number; envelope: Envelope }> }) {
  return (
    <details class="live-events">
      <summary>Live events ({recent.length})</summary>
      <ol>
        {recent.map(({ position, envelope }) => (
          <li key={position}>
            <span class="pos">#{position}</span> {envelope.deviceId} · {envelope.event} · {summarize(envelope)}
          </li>
        ))}
      </ol>
    </details>
  );
}

function summarize(envelope: Envelope): string {
  const d = envelope.data;
  if (envelope.event === 'session.state') return `${d.previousState ?? '?'} → ${d.state}`;
  if (envelope.event === 'message.status') return `${d.waMessageId} ${d.status}`;
  if (envelope.event === 'message.received') return `from +${d.from}: ${d.body}`;
  return '';
}

interface DetailProps {
  adminKey: string;
  device: Device;
  version: number;
  notify: Notify;
  onChanged: () => void;
  onDeleted: () => void;
  bump: () => void;
}

function DeviceDetail(outer: Omit<DetailProps, 'bump'>) {
  // What this page did itself (queueing, cancelling) is not an event of the stream: reload after it too.
  const [local, setLocal] = useState(0);
  const props: DetailProps = { ...outer, version: outer.version + local, bump: () => setLocal((n) => n + 1) };
  const { device } = props;
  return (
    <section class="detail" aria-labelledby="detail-title">
      <h2 id="detail-title">
        {device.name} <span class="id">({device.id})</span>
      </h2>
      <Settings {...props} />
      <Session {...props} />
      <SendText {...props} />
      <Outbox {...props} />
      <Hooks {...props} />
      <History {...props} />
    </section>
  );
}

function Settings({ adminKey, device, notify, onChanged, onDeleted }: DetailProps) {
  const [name, setName] = useState(device.name);
  const base = `/devices/${enc(device.id)}`;
  const rename = async (event: Event) => {
    event.preventDefault();
    try {
      await call(adminKey, 'PATCH', base, { name: name.trim() });
      notify('Renamed.');
      onChanged();
    } catch (err) {
      notify(describe(err), 'error');
    }
  };
  const remove = async () => {
    if (!confirm(`Delete device ${device.id}? Its session ends and its outbox is cancelled.`)) return;
    try {
      await call(adminKey, 'DELETE', base);
      notify(`Device ${device.id} deleted.`);
      onDeleted();
    } catch (err) {
      notify(describe(err), 'error');
    }
  };
  return (
    <div class="card">
      <h3>Settings</h3>
      <form class="inline" onSubmit={rename}>
        <label for="rename">Name</label>
        <input id="rename" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit">Rename</button>
      </form>
      <p>
        Engine: {device.engine} · created {new Date(device.createdAt).toLocaleString()}
      </p>
      <button type="button" class="danger" onClick={remove}>
        Delete device
      </button>
    </div>
  );
}

function Session({ adminKey, device, notify }: DetailProps) {
  const base = `/devices/${enc(device.id)}/session`;
  const state = device.session.state;
  const [qrUrl, setQrUrl] = useState<string | null>(null);
  const lastCode = useRef<string | null>(null);

  // While the session shows a QR code, follow its renewals: the image is fetched with the key and shown from a blob URL.
  useEffect(() => {
    if (state !== 'qr') {
      lastCode.current = null;
      setQrUrl((old) => (old && URL.revokeObjectURL(old), null));
      return;
    }
    let stopped = false;
    const refresh = async () => {
      try {
        const { qr } = await call<{ qr: string }>(adminKey, 'GET', `${base}/qr`);
        if (stopped || qr === lastCode.current) return;
        const blob = await fetchBlob(adminKey, `${base}/qr.png`);
        if (stopped) return;
        lastCode.current = qr;
        const url = URL.createObjectURL(blob);
        setQrUrl((old) => (old && URL.revokeObjectURL(old), url));
      } catch {
        // between codes or no longer qr: the next round or the next state says
      }
    };
    void refresh();
    const timer = setInterval(refresh, 3000);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [state, adminKey, base]);

  const run = async (path: string, body?: unknown) => {
    try {
      const answer = await call<{ state: string }>(adminKey, 'POST', `${base}/${path}`, body);
      notify(`Session: ${answer.state}`);
    } catch (err) {
      notify(describe(err), 'error');
    }
  };

  // Linking by a code typed on the phone instead of a QR: the code is asked for again once it expires
  // (the answer is the code on show), as long as the session is pairing.
  const [pairPhone, setPairPhone] = useState('');
  const [pairing, setPairing] = useState<{ code: string; expiresAt: string } | null>(null);
  const askCode = async (phone: string): Promise<boolean> => {
    try {
      const answer = await call<{ pairingCode: string; expiresAt: string }>(adminKey, 'POST', `${base}/pair`, {
        phone,
      });
      setPairing({ code: answer.pairingCode, expiresAt: answer.expiresAt });
      return true;
    } catch (err) {
      notify(describe(err), 'error');
      return false;
    }
  };
  useEffect(() => {
    if (state !== 'pairing') {
      if (state === 'online' || state === 'closed' || state === 'logged_out') setPairing(null);
      return;
    }
    if (!pairing || pairPhone === '') return;
    const timer = setTimeout(
      () => void askCode(pairPhone),
      Math.max(1_000, Date.parse(pairing.expiresAt) - Date.now()),
    );
    return () => clearTimeout(timer);
  }, [state, pairing, pairPhone]);
  const pair = async (event: Event) => {
    event.preventDefault();
    if (await askCode(pairPhone)) notify('Session: pairing');
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
        <button type="button" onClick={() => run('open')}>
          Open session
        </button>
        <button type="button" class="secondary" onClick={() => run('close', {})}>
          Close
        </button>
        <button
          type="button"
          class="secondary"
          onClick={() => confirm('Unlink the account and wipe its credentials?') && run('close', { logout: true })}
        >
          Log out
        </button>
      </div>
      {state === 'qr' && (
        <figure class="qr">
          {qrUrl ? (
            <img
              src={qrUrl}
              alt="QR code: scan it with the phone (WhatsApp → Linked devices)"
              width={264}
              height={264}
            />
          ) : (
            <p>Loading the QR code…</p>
          )}
          <figcaption>Scan with the phone: WhatsApp → Settings → Linked devices. The code renews by itself.</figcaption>
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
          Type this code on the phone (WhatsApp → Linked devices → Link with phone number):{' '}
          <strong data-testid="pairing-code">{pairing.code}</strong>
        </p>
      )}
    </div>
  );
}

function SendText({ adminKey, device, notify, bump }: DetailProps) {
  const [to, setTo] = useState('');
  const [text, setText] = useState('Hello from the dashboard');
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      const answer = await call<{ waMessageId: string; status: string }>(
        adminKey,
        'POST',
        `/devices/${enc(device.id)}/send/text`,
        { to: to.replace(/\D/g, ''), text },
      );
      notify(`Queued ${answer.waMessageId} (${answer.status}).`);
      bump();
    } catch (err) {
      notify(describe(err), 'error');
    }
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="send-title">
      <h3 id="send-title">Send a test message</h3>
      <label for="send-to">To (phone number, digits)</label>
      <input
        id="send-to"
        inputMode="tel"
        required
        value={to}
        onInput={(e) => setTo(e.currentTarget.value)}
        placeholder="4915112345678"
      />
      <label for="send-text">Text</label>
      <textarea id="send-text" required rows={2} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <button type="submit">Send text</button>
    </form>
  );
}

/** Loads `path` now, whenever the device's version changes (an event came), and when `reload` is called. */
function useDeviceData<T>(adminKey: string, path: string, version: number): [T | null, () => void, string] {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState('');
  const [nonce, setNonce] = useState(0);
  useEffect(() => {
    let stopped = false;
    call<T>(adminKey, 'GET', path).then(
      (d) => !stopped && (setData(d), setError('')),
      (err) =>
        !stopped && setError(err instanceof ApiError && err.code === 'hooks_not_configured' ? '' : describe(err)),
    );
    return () => {
      stopped = true;
    };
  }, [adminKey, path, version, nonce]);
  return [data, () => setNonce((n) => n + 1), error];
}

interface OutboxItem {
  outboxId: string;
  waMessageId: string;
  kind: string;
  to: string;
  status: string;
  attempts: number;
  createdAt: string;
  lastError?: { code: string; message: string };
}

function Outbox({ adminKey, device, version, notify, bump }: DetailProps) {
  const path = `/devices/${enc(device.id)}/outbox?limit=100`;
  const [page, reload, error] = useDeviceData<{ items: OutboxItem[] }>(adminKey, path, version);
  const cancel = async (item: OutboxItem) => {
    try {
      await call(adminKey, 'DELETE', `/devices/${enc(device.id)}/outbox/${enc(item.outboxId)}`);
      notify(`Cancelled ${item.waMessageId}.`);
    } catch (err) {
      notify(describe(err), 'error');
    }
    reload();
    bump();
  };
  return (
    <div class="card" aria-labelledby="outbox-title">
      <h3 id="outbox-title">Outbox</h3>
      {error && <p class="error">{error}</p>}
      {page && page.items.length === 0 && <p>Nothing waiting.</p>}
      {page && page.items.length > 0 && (
        <table>
          <caption class="sr-only">Messages waiting to be sent</caption>
          <thead>
            <tr>
              <th scope="col">Message</th>
              <th scope="col">To</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {page.items.map((item) => (
              <tr key={item.outboxId}>
                <td>
                  {item.kind} <code>{item.waMessageId}</code>
                </td>
                <td>+{item.to}</td>
                <td class="status">
                  {item.status}
                  {item.attempts > 0 && ` (${item.attempts} tries)`}
                  {item.lastError && <span class="error"> {item.lastError.code}</span>}
                </td>
                <td>
                  <button
                    type="button"
                    class="secondary"
                    disabled={item.status === 'sending'}
                    onClick={() => cancel(item)}
                    aria-label={`Cancel ${item.waMessageId}`}
                  >
                    Cancel
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

interface HookSettings {
  url: string;
  events: string[];
  secret: string;
}

interface Delivery {
  id: string;
  event: string;
  status: string;
  attempts: number;
  lastStatus?: number;
  lastError?: string;
  nextAttemptAt?: string;
  createdAt: string;
}

const HOOK_KINDS = ['message.received', 'message.status', 'session.state'];

function Hooks({ adminKey, device, version, notify }: DetailProps) {
  const base = `/devices/${enc(device.id)}/hooks`;
  const [hooks, reloadHooks] = useDeviceData<HookSettings>(adminKey, base, 0);
  const [deliveries, reloadDeliveries, deliveriesError] = useDeviceData<{ items: Delivery[] }>(
    adminKey,
    `${base}/deliveries?limit=20`,
    version,
  );
  const [url, setUrl] = useState('');
  const [kinds, setKinds] = useState<string[]>(HOOK_KINDS);
  useEffect(() => {
    if (hooks) {
      setUrl(hooks.url);
      setKinds(hooks.events);
    }
  }, [hooks]);
  // Delivery outcomes are not events of the stream: look again a moment after anything happened.
  useEffect(() => {
    const timer = setTimeout(reloadDeliveries, 1500);
    return () => clearTimeout(timer);
  }, [version]);

  const save = async (event: Event) => {
    event.preventDefault();
    try {
      await call(adminKey, 'PUT', base, { url: url.trim(), events: kinds });
      notify('Webhook saved.');
      reloadHooks();
    } catch (err) {
      notify(describe(err), 'error');
    }
  };
  const remove = async () => {
    try {
      await call(adminKey, 'DELETE', base);
      notify('Webhook removed.');
      setUrl('');
      reloadHooks();
    } catch (err) {
      notify(describe(err), 'error');
    }
  };
  const test = async () => {
    try {
      const r = await call<{ delivered: boolean; status?: number; durationMs: number; error?: string }>(
        adminKey,
        'POST',
        `${base}/test`,
      );
      notify(
        r.delivered
          ? `Test delivered (${r.status}, ${r.durationMs} ms).`
          : `Test not delivered: ${r.error ?? r.status}`,
        r.delivered ? 'ok' : 'error',
      );
    } catch (err) {
      notify(describe(err), 'error');
    }
  };
  const retry = async (delivery: Delivery) => {
    try {
      await call(adminKey, 'POST', `${base}/deliveries/${enc(delivery.id)}/retry`);
      notify('Delivery queued again.');
    } catch (err) {
      notify(describe(err), 'error');
    }
    reloadDeliveries();
  };
  const toggle = (kind: string, on: boolean) =>
    setKinds((list) => (on ? [...new Set([...list, kind])] : list.filter((k) => k !== kind)));

  return (
    <div class="card">
      <h3>Webhook</h3>
      <form onSubmit={save}>
        <label for="hook-url">Receiver URL</label>
        <input
          id="hook-url"
          type="url"
          required
          value={url}
          onInput={(e) => setUrl(e.currentTarget.value)}
          placeholder="https://example.com/hooks"
        />
        <fieldset>
          <legend>Events</legend>
          {HOOK_KINDS.map((kind) => (
            <label key={kind} class="check">
              <input
                type="checkbox"
                checked={kinds.includes(kind)}
                onChange={(e) => toggle(kind, e.currentTarget.checked)}
              />{' '}
              {kind}
            </label>
          ))}
        </fieldset>
        <div class="buttons">
          <button type="submit" disabled={kinds.length === 0}>
            Save webhook
          </button>
          <button type="button" class="secondary" onClick={test} disabled={!hooks}>
            Send test
          </button>
          <button type="button" class="secondary" onClick={remove} disabled={!hooks}>
            Remove
          </button>
        </div>
      </form>
      {hooks && (
        <p class="hint">
          Signing secret: <code>{hooks.secret}</code>
        </p>
      )}
      <h4>Deliveries</h4>
      <button type="button" class="link" onClick={reloadDeliveries}>
        Refresh
      </button>
      {deliveriesError && <p class="error">{deliveriesError}</p>}
      {deliveries && deliveries.items.length === 0 && <p>No deliveries yet.</p>}
      {deliveries && deliveries.items.length > 0 && (
        <ul class="deliveries" data-testid="deliveries">
          {deliveries.items.map((d) => (
            <li key={d.id}>
              <span class={`badge ${d.status}`}>{d.status}</span> {d.event} · {d.attempts} attempt
              {d.attempts === 1 ? '' : 's'}
              {d.lastStatus !== undefined && ` · HTTP ${d.lastStatus}`}
              {d.lastError && <span class="error"> · {d.lastError}</span>}
              {d.status !== 'pending' && (
                <button type="button" class="link" onClick={() => retry(d)} aria-label={`Retry delivery ${d.id}`}>
                  Retry
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

interface HistoryItem {
  position: number;
  stream: string;
  type: string;
  data: Record<string, any>;
  createdAt: string;
}

function History({ adminKey, device, version }: DetailProps) {
  const [items, setItems] = useState<HistoryItem[]>([]);
  const [error, setError] = useState('');
  useEffect(() => {
    let stopped = false;
    (async () => {
      // The newest 200, read backwards from the end of the log: however long the history, they are its latest.
      const page: { items: HistoryItem[] } = await call(
        adminKey,
        'GET',
        `/devices/${enc(device.id)}/events?direction=backwards&limit=200`,
      );
      if (!stopped) (setItems(page.items), setError(''));
    })().catch((err) => !stopped && setError(describe(err)));
    return () => {
      stopped = true;
    };
  }, [adminKey, device.id, version]);
  return (
    <div class="card">
      <h3>History</h3>
      {error && <p class="error">{error}</p>}
      <ol class="timeline" data-testid="history">
        {items.map((item) => (
          <li key={item.position}>
            <time dateTime={item.createdAt}>{new Date(item.createdAt).toLocaleTimeString()}</time>{' '}
            <strong>{item.type}</strong> <span class="hint">{item.stream}</span> {historyDetail(item)}
          </li>
        ))}
      </ol>
    </div>
  );
}

function historyDetail(item: HistoryItem): string {
  const d = item.data ?? {};
  if (item.type === 'SessionStateChanged') return String(d.state ?? '');
  if (item.type === 'OutboxMessageQueued') return `to +${d.to ?? ''} ${d.content?.text ?? ''}`.trim();
  if (item.type === 'MessageStatusChanged') return `${d.status} ${d.waMessageId ?? ''}`;
  if (item.type === 'MessageReceived') return `from +${d.from}: ${d.body}`;
  return '';
}

render(<App />, document.getElementById('app')!);
