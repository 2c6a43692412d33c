import { useHealth } from '../hooks/use-health.js';

const formatUptime = (s: number) =>
  s < 120 ? `${Math.round(s)} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`;

export function Health({ adminKey }: { adminKey: string }) {
  const { health, unreachable } = useHealth(adminKey);
  if (unreachable) return <p class="health bad">Health: unreachable</p>;
  if (!health) return <p class="health">Health: …</p>;
  return (
    <p class={`health ${health.status === 'ok' ? 'good' : 'bad'}`} data-testid="health">
      Health: <strong>{health.status}</strong>
      {health.version === undefined ? '' : ` · v${health.version}`} · {health.store.kind} store{' '}
      {health.store.ok ? 'ok' : 'down'}
      {health.uptimeSeconds === undefined ? '' : ` · up ${formatUptime(health.uptimeSeconds)}`}
    </p>
  );
}
