import type { GatewayApi } from '../api/client.js';
import type { Overview } from '../api/types.js';
import { useOverview } from '../hooks/use-overview.js';

interface OverviewProps {
  api: GatewayApi;
  /** Moves on with every event of the live stream. */
  version: number;
  onSelect: (deviceId: string) => void;
}

/** How far the webhooks are behind: the deliveries waiting, and since when the oldest. */
function WebhookLag({ lag }: { lag: Overview['webhooks'] }) {
  return (
    <>
      {lag.pending}
      {lag.oldestPendingAt !== null && (
        <small class="since">
          {' '}
          since <time dateTime={lag.oldestPendingAt}>{new Date(lag.oldestPendingAt).toLocaleTimeString()}</time>
        </small>
      )}
    </>
  );
}

/** The first screen: what every device did today, and what is waiting (GET /overview). */
export function OverviewPanel({ api, version, onSelect }: OverviewProps) {
  const [overview, error] = useOverview(api, version);
  return (
    <section class="detail overview" aria-labelledby="overview-title">
      <h2 id="overview-title">Today{overview && <span class="id"> ({overview.day}, UTC)</span>}</h2>
      {error && <p class="error">{error}</p>}
      {!overview && !error && <p>Loading…</p>}
      {overview && (
        <>
          <dl class="figures" data-testid="overview-figures">
            <div>
              <dt>Devices</dt>
              <dd data-testid="overview-devices">{overview.devices.total}</dd>
            </div>
            <div>
              <dt>Online</dt>
              <dd data-testid="overview-online">{overview.devices.byState.online ?? 0}</dd>
            </div>
            <div>
              <dt>Sent</dt>
              <dd data-testid="overview-sent">{overview.today.sent}</dd>
            </div>
            <div>
              <dt>Received</dt>
              <dd data-testid="overview-received">{overview.today.received}</dd>
            </div>
            <div>
              <dt>Failed</dt>
              <dd data-testid="overview-failed" class={overview.today.failed > 0 ? 'error' : undefined}>
                {overview.today.failed}
              </dd>
            </div>
            <div>
              <dt>In the outbox</dt>
              <dd data-testid="overview-outbox">{overview.outboxDepth}</dd>
            </div>
            <div>
              <dt>Webhooks waiting</dt>
              <dd data-testid="overview-webhooks" class={overview.webhooks.pending > 0 ? 'error' : undefined}>
                <WebhookLag lag={overview.webhooks} />
              </dd>
            </div>
          </dl>
          {overview.items.length === 0 ? (
            <p>No devices yet: create one on the left.</p>
          ) : (
            <table class="overview-table">
              <caption class="sr-only">Each device today</caption>
              <thead>
                <tr>
                  <th scope="col">Device</th>
                  <th scope="col">Session</th>
                  <th scope="col">Sent</th>
                  <th scope="col">Received</th>
                  <th scope="col">Failed</th>
                  <th scope="col">Outbox</th>
                  <th scope="col">Webhooks waiting</th>
                </tr>
              </thead>
              <tbody>
                {overview.items.map((item) => (
                  <tr key={item.id} data-testid={`overview-${item.id}`}>
                    <th scope="row">
                      <button type="button" class="link" onClick={() => onSelect(item.id)}>
                        {item.name}
                      </button>
                    </th>
                    <td>
                      <span class={`state state-${item.state}`}>{item.state}</span>
                    </td>
                    <td>{item.today.sent}</td>
                    <td>{item.today.received}</td>
                    <td class={item.today.failed > 0 ? 'error' : undefined}>{item.today.failed}</td>
                    <td>{item.outboxDepth}</td>
                    <td class={item.webhooks.pending > 0 ? 'error' : undefined}>
                      <WebhookLag lag={item.webhooks} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {overview.nextCursor && <p class="hint">The first {overview.items.length} devices are shown.</p>}
        </>
      )}
    </section>
  );
}
