import { useEffect, useState } from 'preact/hooks';
import { ALL_EVENTS, WEBHOOK_EVENT_KINDS, type WebhookEventKind } from '../../../src/webhooks/event-kinds.js';
import { ApiError, describeError } from '../api/client.js';
import type { Delivery, HookEvents, Hooks } from '../api/types.js';
import { useLoaded } from '../hooks/use-loaded.js';
import type { DetailProps } from './detail-props.js';

const SHOWN = 20;
/** What a new webhook sends until the operator picks: every kind there is now. */
const DEFAULT_EVENTS: HookEvents = [...WEBHOOK_EVENT_KINDS];

/** A device without a webhook answers 404 `hooks_not_configured`: that is "none", not a failure. */
const noneIfNotConfigured = (err: unknown): null => {
  if (err instanceof ApiError && err.code === 'hooks_not_configured') return null;
  throw err;
};

export function Webhook({ api, device, version, notify }: DetailProps) {
  const [hooks, reloadHooks] = useLoaded<Hooks | null>(
    () => api.hooks(device.id).catch(noneIfNotConfigured),
    [api, device.id],
  );
  const [deliveries, reloadDeliveries, deliveriesError] = useLoaded(
    () => api.deliveries(device.id, SHOWN),
    [api, device.id, version],
  );
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<HookEvents>(DEFAULT_EVENTS);
  useEffect(() => {
    if (hooks) {
      setUrl(hooks.url);
      setEvents(hooks.events);
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
      await api.putHooks(device.id, { url: url.trim(), events });
      notify('Webhook saved.');
      reloadHooks();
    } catch (err) {
      notify(describeError(err), 'error');
    }
  };
  const remove = async () => {
    try {
      await api.deleteHooks(device.id);
      notify('Webhook removed.');
      setUrl('');
      reloadHooks();
    } catch (err) {
      notify(describeError(err), 'error');
    }
  };
  const test = async () => {
    try {
      const r = await api.testHooks(device.id);
      notify(
        r.delivered
          ? `Test delivered (${r.status}, ${r.durationMs} ms).`
          : `Test not delivered: ${r.error ?? r.status}`,
        r.delivered ? 'ok' : 'error',
      );
    } catch (err) {
      notify(describeError(err), 'error');
    }
  };
  const retry = async (delivery: Delivery) => {
    try {
      await api.retryDelivery(device.id, delivery.id);
      notify('Delivery queued again.');
    } catch (err) {
      notify(describeError(err), 'error');
    }
    reloadDeliveries();
  };

  // "*" stands for every kind, present and future: while it is picked, the kinds one by one are all in.
  const everything = events.includes(ALL_EVENTS);
  const toggleEverything = (on: boolean) => setEvents(on ? [ALL_EVENTS] : DEFAULT_EVENTS);
  const toggle = (kind: WebhookEventKind, on: boolean) =>
    setEvents((list) => (on ? [...new Set([...list, kind])] : list.filter((k) => k !== kind)));

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
          <label class="check">
            <input type="checkbox" checked={everything} onChange={(e) => toggleEverything(e.currentTarget.checked)} />{' '}
            <span>
              every kind, present and future (<code>{ALL_EVENTS}</code>)
            </span>
          </label>
          {WEBHOOK_EVENT_KINDS.map((kind) => (
            <label key={kind} class="check">
              <input
                type="checkbox"
                checked={everything || events.includes(kind)}
                disabled={everything}
                onChange={(e) => toggle(kind, e.currentTarget.checked)}
              />{' '}
              {kind}
            </label>
          ))}
        </fieldset>
        <div class="buttons">
          <button type="submit" disabled={events.length === 0}>
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
              {' · '}
              <time dateTime={d.lastAttemptAt ?? d.createdAt}>
                {new Date(d.lastAttemptAt ?? d.createdAt).toLocaleString()}
              </time>
              {d.lastDurationMs !== undefined && ` (${d.lastDurationMs} ms)`}
              {d.status === 'pending' &&
                d.nextAttemptAt &&
                ` · next try ${new Date(d.nextAttemptAt).toLocaleTimeString()}`}
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
