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
  allowReplies: boolean;
  warmupStart: string;
  warmupGrowth: string;
  warmupMax: string;
  unansweredLimit: string;
  typing: boolean;
}

const fieldsOf = ({ rejectCalls, pacing }: Settings): Fields => ({
  rejectCalls,
  timezone: pacing.timezone,
  dailyCap: pacing.dailyCap === null ? '' : String(pacing.dailyCap),
  quietFrom: pacing.quietHours?.from ?? '',
  quietTo: pacing.quietHours?.to ?? '',
  allowReplies: pacing.quietHours?.allowReplies === true,
  warmupStart: pacing.warmup ? String(pacing.warmup.startPerDay) : '',
  warmupGrowth: pacing.warmup ? String(pacing.warmup.growthPercent) : '',
  warmupMax: pacing.warmup ? String(pacing.warmup.maxPerDay) : '',
  unansweredLimit: pacing.unansweredLimit === null ? '' : String(pacing.unansweredLimit),
  typing: pacing.typing,
});

const numberOrNull = (text: string) => (text.trim() === '' ? null : Number(text));

/** The PATCH of what the form says: the server checks the numbers and answers a 400 the notice shows. */
function patchOf(fields: Fields): PatchSettings {
  const quiet =
    fields.quietFrom && fields.quietTo
      ? { from: fields.quietFrom, to: fields.quietTo, allowReplies: fields.allowReplies }
      : null;
  // All three empty: no warm-up; one of them empty is sent as 0 for the server to refuse, not dropped unseen.
  const warmup =
    fields.warmupStart.trim() || fields.warmupGrowth.trim() || fields.warmupMax.trim()
      ? {
          startPerDay: Number(fields.warmupStart),
          growthPercent: Number(fields.warmupGrowth),
          maxPerDay: Number(fields.warmupMax),
        }
      : null;
  return {
    rejectCalls: fields.rejectCalls,
    pacing: {
      timezone: fields.timezone.trim() || 'UTC',
      warmup,
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
      await api.patchSettings(device.id, patchOf(fields));
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
            <label class="check">
              <input
                type="checkbox"
                checked={fields.allowReplies}
                onChange={(e) => set({ allowReplies: e.currentTarget.checked })}
              />{' '}
              Replies to a number that wrote in the last 24 h go in quiet hours too
            </label>
          </fieldset>
          <fieldset>
            <legend>Warm-up: a daily cap that grows from the day of the link (all empty: none)</legend>
            <label for="warmup-start">Sends on the first day</label>
            <input
              id="warmup-start"
              type="number"
              min={1}
              max={100_000}
              value={fields.warmupStart}
              onInput={(e) => set({ warmupStart: e.currentTarget.value })}
            />
            <label for="warmup-growth">Growth a day (%)</label>
            <input
              id="warmup-growth"
              type="number"
              min={0}
              max={1_000}
              step="any"
              value={fields.warmupGrowth}
              onInput={(e) => set({ warmupGrowth: e.currentTarget.value })}
            />
            <label for="warmup-max">At most a day</label>
            <input
              id="warmup-max"
              type="number"
              min={1}
              max={1_000_000}
              value={fields.warmupMax}
              onInput={(e) => set({ warmupMax: e.currentTarget.value })}
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
          <button type="submit">Save settings</button>
        </form>
      )}
    </div>
  );
}
