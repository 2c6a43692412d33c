import { useState } from 'preact/hooks';
import { describeError } from '../api/client.js';
import type { DetailProps } from './detail-props.js';

export function DeviceSettings({ api, device, notify, onChanged, onDeleted }: DetailProps) {
  const [name, setName] = useState(device.name);
  const rename = async (event: Event) => {
    event.preventDefault();
    try {
      await api.updateDevice(device.id, { name: name.trim() });
      notify('Renamed.');
      onChanged();
    } catch (err) {
      notify(describeError(err), 'error');
    }
  };
  const remove = async () => {
    if (!confirm(`Delete device ${device.id}? Its session ends and its outbox is cancelled.`)) return;
    try {
      await api.deleteDevice(device.id);
      notify(`Device ${device.id} deleted.`);
      onDeleted();
    } catch (err) {
      notify(describeError(err), 'error');
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
