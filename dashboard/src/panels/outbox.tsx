import { describeError } from '../api/client.js';
import type { OutboxItem } from '../api/types.js';
import { useLoaded } from '../hooks/use-loaded.js';
import type { DetailProps } from './detail-props.js';

const SHOWN = 100;

export function Outbox({ api, device, version, notify, bump }: DetailProps) {
  const [page, reload, error] = useLoaded(() => api.outbox(device.id, SHOWN), [api, device.id, version]);
  const cancel = async (item: OutboxItem) => {
    try {
      await api.cancelOutbox(device.id, item.outboxId);
      notify(`Cancelled ${item.waMessageId}.`);
    } catch (err) {
      notify(describeError(err), 'error');
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
              <th scope="col">Queued</th>
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
                  {item.text && <span class="preview">{item.text}</span>}
                </td>
                <td>+{item.to}</td>
                <td>
                  <time dateTime={item.createdAt}>{new Date(item.createdAt).toLocaleString()}</time>
                </td>
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
