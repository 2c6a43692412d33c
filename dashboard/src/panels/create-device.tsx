import { useState } from 'preact/hooks';
import { type GatewayApi, describeError } from '../api/client.js';
import type { Device, Engine } from '../api/types.js';
import type { Notify } from '../hooks/use-notice.js';

/** One label per engine the server knows: a new engine there fails to compile here until it has one. */
const ENGINE_LABELS: Readonly<Record<Engine, string>> = {
  sandbox: 'sandbox (simulated)',
  baileys: 'baileys (WhatsApp)',
};
const ENGINES = Object.keys(ENGINE_LABELS) as Engine[];

export function CreateDevice({
  api,
  notify,
  onCreated,
}: {
  api: GatewayApi;
  notify: Notify;
  onCreated: (device: Device) => void;
}) {
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [engine, setEngine] = useState<Engine>('sandbox');
  const [created, setCreated] = useState<{ id: string; key: string } | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      const { deviceKey, ...device } = await api.createDevice({
        ...(id.trim() ? { id: id.trim() } : {}),
        name: name.trim(),
        engine,
      });
      setCreated({ id: device.id, key: deviceKey });
      setId('');
      setName('');
      onCreated(device);
    } catch (err) {
      notify(describeError(err), 'error');
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
        <select
          id="new-engine"
          value={engine}
          onChange={(e) => setEngine(ENGINES.find((known) => known === e.currentTarget.value) ?? 'sandbox')}
        >
          {ENGINES.map((known) => (
            <option key={known} value={known}>
              {ENGINE_LABELS[known]}
            </option>
          ))}
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
