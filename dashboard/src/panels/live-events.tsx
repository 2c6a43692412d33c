import type { Envelope, StreamEvent } from '../api/types.js';

/** A few words on the kinds whose line says more than its kind. */
function summarize(envelope: Envelope): string {
  switch (envelope.event) {
    case 'session.state':
      return `${envelope.data.previousState} → ${envelope.data.state}`;
    case 'message.status':
      return `${envelope.data.waMessageId} ${envelope.data.status}`;
    case 'message.received':
      return `from +${envelope.data.from}: ${envelope.data.body}`;
    default:
      return '';
  }
}

export function LiveEvents({ recent }: { recent: readonly StreamEvent[] }) {
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
