import type { Device } from '../api/types.js';

export function DeviceList({
  devices,
  selected,
  onSelect,
}: {
  devices: readonly Device[];
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
