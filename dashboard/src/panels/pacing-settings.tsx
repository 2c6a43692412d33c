import { useEffect, useState } from 'preact/hooks';
import { describeError } from '../api/client.js';
import type { PatchSettings, Settings } from '../api/types.js';
import { useLoaded } from '../hooks/use-loaded.js';
import type { DetailProps } from './detail-props.js';

/** The form's fields, as typed: an empty number or time turns that part off. */
interface Fields {
  rejectCalls: boolean;
  timezone: string;
  dailyCap: string;
  quietFrom: string;
  quietTo: string;
  unansweredLimit: string;
  typing: boolean;
}

const fieldsOf = ({ rejectCalls, pacing }: Settings): Fields => ({
  rejectCalls,
  timezone: pacing.timezone,
  dailyCap: pacing.dailyCap === null ? '' : String(pacing.dailyCap),
  quietFrom: pacing.quietHours?.from ?? '',
  quietTo: pacing.quietHours?.to ?? '',
  unansweredLimit: pacing.unansweredLimit === null ? '' : String(pacing.unansweredLimit),
  typing: pacing.typing,
});

const numberOrNull = (text: string) => (text.trim() === '' ? null : Number(text));

/** The PATCH of what the form says; quiet hours keep their `allowReplies`, the warm-up is left as it is. */
function patchOf(fields: Fields, current: Settings): PatchSettings {
  const quiet =
    fields.quietFrom && fields.quietTo
      ? {
          from: fields.quietFrom,
          to: fields.quietTo,
          ...(current.pacing.quietHours?.allowReplies === undefined
            ? {}
            : { allowReplies: current.pacing.quietHours.allowReplies }),
        }
      : null;
  return {
    rejectCalls: fields.rejectCalls,
    pacing: {
      timezone: fields.timezone.trim() || 'UTC',
      dailyCap: numberOrNull(fields.dailyCap),
      quietHours: quiet,
      unansweredLimit: numberOrNull(fields.unansweredLimit),
      typing: fields.typing,
    },
  };
}

/** Calls and pacing (GET/PATCH /settings, GET /pacing): how the device answers calls and how fast it may send. */
export function PacingSettings({ api, device, version, notify }: DetailProps) {
  const [settings, reload, error] = useLoaded(() => api.settings(device.id), [api, device.id]);
  const [pacing] = useLoaded(() => api.pacing(device.id), [api, device.id, version, settings]);
  const [fields, setFields] = useState<Fields | null>(null);
  useEffect(() => {
    if (settings) setFields(fieldsOf(settings));
  }, [settings]);
  const set = (change: Partial<Fields>) => setFields((now) => (now ? { ...now, ...change } : now));

  const save = async (event: Event) => {
    event.preventDefault();
    if (!settings || !fields) return;
    try {
      await api.patchSettings(device.id, patchOf(fields, settings));
      notify('Settings saved.');
      reload();
    } catch (err) {
      notify(describeError(err), 'error');
    }
  };

  return (
    <div class="card" aria-labelledby="pacing-title">
      <h3 id="pacing-title">Calls and pacing</h3>
      {error && <p class="error">{error}</p>}
      {pacing && (
        <p data-testid="pacing-status">
          Today: {pacing.today} sent{pacing.cap !== null && ` of ${pacing.cap}`}
          {pacing.deferred > 0 && ` · ${pacing.deferred} waiting`}
          {pacing.nextWindowAt !== null && (
            <>
              {' '}
              · sends again at{' '}
              <time dateTime={pacing.nextWindowAt}>{new Date(pacing.nextWindowAt).toLocaleString()}</time>
            </>
          )}
        </p>
      )}
      {fields && settings && (
        <form onSubmit={save}>
          <label class="check">
            <input
              type="checkbox"
              checked={fields.rejectCalls}
              onChange={(e) => set({ rejectCalls: e.currentTarget.checked })}
            />{' '}
            Reject incoming calls
          </label>
          <label class="check">
            <input type="checkbox" checked={fields.typing} onChange={(e) => set({ typing: e.currentTarget.checked })} />{' '}
            Show “typing…” before sending, as a person would
          </label>
          <label for="pacing-cap">Sends per day (empty: no cap)</label>
          <input
            id="pacing-cap"
            type="number"
            min={1}
            max={1_000_000}
            value={fields.dailyCap}
            onInput={(e) => set({ dailyCap: e.currentTarget.value })}
          />
          <fieldset>
            <legend>Quiet hours (both empty: none)</legend>
            <label for="quiet-from">From</label>
            <input
              id="quiet-from"
              type="time"
              value={fields.quietFrom}
              onInput={(e) => set({ quietFrom: e.currentTarget.value })}
            />
            <label for="quiet-to">To</label>
            <input
              id="quiet-to"
              type="time"
              value={fields.quietTo}
              onInput={(e) => set({ quietTo: e.currentTarget.value })}
            />
          </fieldset>
          <label for="pacing-timezone">Time zone of the day and the quiet hours</label>
          <input
            id="pacing-timezone"
            value={fields.timezone}
            placeholder="Europe/Berlin"
            onInput={(e) => set({ timezone: e.currentTarget.value })}
          />
          <label for="pacing-unanswered">Sends to a number that never wrote (empty: no limit)</label>
          <input
            id="pacing-unanswered"
            type="number"
            min={1}
            max={100_000}
            value={fields.unansweredLimit}
            onInput={(e) => set({ unansweredLimit: e.currentTarget.value })}
          />
          {settings.pacing.warmup && (
            <p class="hint">
              Warm-up: {settings.pacing.warmup.startPerDay} a day at first, +{settings.pacing.warmup.growthPercent}% a
              day, up to {settings.pacing.warmup.maxPerDay} (change it with PATCH /settings).
            </p>
          )}
          <button type="submit">Save settings</button>
        </form>
      )}
    </div>
  );
}
