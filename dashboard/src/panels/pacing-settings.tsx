import type { InputHTMLAttributes } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { describeError } from '../api/client.js';
import type { PatchSettings, Settings } from '../api/types.js';
import { useLoaded } from '../hooks/use-loaded.js';
import type { DetailProps } from './detail-props.js';
import { LabelledCheck } from './labelled-check.js';
import { LabelledInput } from './labelled-input.js';

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

/** The fields typed as text. */
type TypedField = {
  [K in keyof Fields]: Fields[K] extends string ? K : never;
}[keyof Fields];

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
  const [settings, , error] = useLoaded(() => api.settings(device.id), [api, device.id]);
  const [pacing, reloadPacing] = useLoaded(() => api.pacing(device.id), [api, device.id, version]);
  const [fields, setFields] = useState<Fields | null>(null);
  useEffect(() => {
    if (settings) setFields(fieldsOf(settings));
  }, [settings]);
  const set = (change: Partial<Fields>) => setFields((now) => (now ? { ...now, ...change } : now));
  /** The labelled input of one field typed as text (a number, a time, the time zone). */
  const input = (field: TypedField, id: string, label: string, attributes?: InputHTMLAttributes) => (
    <LabelledInput
      id={id}
      label={label}
      value={fields?.[field] ?? ''}
      onValue={(value) => set({ [field]: value })}
      attributes={attributes}
    />
  );

  const save = async (event: Event) => {
    event.preventDefault();
    if (!settings || !fields) return;
    try {
      // The form shows what the PATCH answered, set with the notice in one render: a reload landing later
      // would put back what the user has typed since.
      setFields(fieldsOf(await api.patchSettings(device.id, patchOf(fields))));
      notify('Settings saved.');
      reloadPacing();
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
          <LabelledCheck checked={fields.rejectCalls} onChecked={(rejectCalls) => set({ rejectCalls })}>
            Reject incoming calls
          </LabelledCheck>
          <LabelledCheck checked={fields.typing} onChecked={(typing) => set({ typing })}>
            Show “typing…” before sending, as a person would
          </LabelledCheck>
          {input('dailyCap', 'pacing-cap', 'Sends per day (empty: no cap)', { type: 'number', min: 1, max: 1_000_000 })}
          <fieldset>
            <legend>Quiet hours (both empty: none)</legend>
            {input('quietFrom', 'quiet-from', 'From', { type: 'time' })}
            {input('quietTo', 'quiet-to', 'To', { type: 'time' })}
            <LabelledCheck checked={fields.allowReplies} onChecked={(allowReplies) => set({ allowReplies })}>
              Replies to a number that wrote in the last 24 h go in quiet hours too
            </LabelledCheck>
          </fieldset>
          <fieldset>
            <legend>Warm-up: a daily cap that grows from the day of the link (all empty: none)</legend>
            {input('warmupStart', 'warmup-start', 'Sends on the first day', { type: 'number', min: 1, max: 100_000 })}
            {input('warmupGrowth', 'warmup-growth', 'Growth a day (%)', {
              type: 'number',
              min: 0,
              max: 1_000,
              step: 'any',
            })}
            {input('warmupMax', 'warmup-max', 'At most a day', { type: 'number', min: 1, max: 1_000_000 })}
          </fieldset>
          {input('timezone', 'pacing-timezone', 'Time zone of the day and the quiet hours', {
            placeholder: 'Europe/Berlin',
          })}
          {input('unansweredLimit', 'pacing-unanswered', 'Sends to a number that never wrote (empty: no limit)', {
            type: 'number',
            min: 1,
            max: 100_000,
          })}
          <button type="submit">Save settings</button>
        </form>
      )}
    </div>
  );
}
