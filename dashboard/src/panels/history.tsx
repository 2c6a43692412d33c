import type { Envelope, HistoryItem } from '../api/types.js';
import { useLoaded } from '../hooks/use-loaded.js';
import type { DetailProps } from './detail-props.js';

const SHOWN = 200;

/** The data of the events that leave as webhook kind `Kind`: stored events carry their payload as is. */
type PayloadOf<Kind extends Envelope['event']> = Extract<Envelope, { event: Kind }>['data'];
/** What the page reads of a queued message (the history answer types no event's data). */
interface QueuedMessage {
  to: string;
  content: { kind: string; text?: string };
}

function historyDetail(item: HistoryItem): string {
  switch (item.type) {
    case 'SessionStateChanged':
      return (item.data as PayloadOf<'session.state'>).state;
    case 'OutboxMessageQueued': {
      const { to, content } = item.data as QueuedMessage;
      return `to +${to} ${content.text ?? ''}`.trim();
    }
    case 'MessageStatusChanged': {
      const { status, waMessageId } = item.data as PayloadOf<'message.status'>;
      return `${status} ${waMessageId}`;
    }
    case 'MessageReceived': {
      const { from, body } = item.data as PayloadOf<'message.received'>;
      return `from +${from}: ${body}`;
    }
    default:
      return '';
  }
}

export function History({ api, device, version }: DetailProps) {
  const [page, , error] = useLoaded(() => api.latestHistory(device.id, SHOWN), [api, device.id, version]);
  return (
    <div class="card">
      <h3>History</h3>
      {error && <p class="error">{error}</p>}
      <ol class="timeline" data-testid="history" tabIndex={0} aria-label="Newest events first">
        {page?.items.map((item) => (
          <li key={item.position}>
            <time dateTime={item.createdAt}>{new Date(item.createdAt).toLocaleTimeString()}</time>{' '}
            <strong>{item.type}</strong> <span class="hint">{item.stream}</span> {historyDetail(item)}
          </li>
        ))}
      </ol>
    </div>
  );
}
