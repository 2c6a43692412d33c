/**
 * A device's pacing as answers show it (every part, null where it is off) and a PATCH of it: each part optional,
 * null turns one off. The settings decider merges a patch into the policy its stream holds, so that two changes
 * of different parts at the same time both stay (a merge with the read model, which lags, lost one).
 */
import { invalidField } from '../errors/domain-error.js';
import { DEFAULT_PACING, type PacingPolicy, isTimeZone } from '../outbox/pacing/pacing.js';

/** The pacing as answers show it: every part, null where it is off. */
export interface PacingView {
  timezone: string;
  warmup: NonNullable<PacingPolicy['warmup']> | null;
  dailyCap: number | null;
  quietHours: NonNullable<PacingPolicy['quietHours']> | null;
  unansweredLimit: number | null;
  typing: boolean;
}

/** Each part optional; null turns one off. */
export type PacingPatch = Partial<PacingView>;

export function pacingViewOf(pacing: PacingPolicy = DEFAULT_PACING): PacingView {
  return {
    timezone: pacing.timezone,
    warmup: pacing.warmup ?? null,
    dailyCap: pacing.dailyCap ?? null,
    quietHours: pacing.quietHours ?? null,
    unansweredLimit: pacing.unansweredLimit ?? null,
    typing: pacing.typing ?? false,
  };
}

/** Refuses what no policy may hold, before anything is decided: an unknown time zone, a warm-up that shrinks. */
export function checkPacingPatch(patch: PacingPatch): void {
  if (patch.timezone !== undefined && !isTimeZone(patch.timezone))
    throw invalidField(
      '/pacing/timezone',
      `is not an IANA time zone this gateway knows (e.g. Europe/Berlin, UTC): ${patch.timezone}`,
    );
  if (patch.warmup && patch.warmup.maxPerDay < patch.warmup.startPerDay)
    throw invalidField('/pacing/warmup/maxPerDay', 'must be at least startPerDay');
}

/** The recorded pacing with the patch's parts put in (null: that part off), recorded without the parts that are off. */
export function mergePacing(current: PacingPolicy = DEFAULT_PACING, patch: PacingPatch): PacingPolicy {
  const merged: PacingView = { ...pacingViewOf(current) };
  for (const key of Object.keys(patch) as Array<keyof PacingView>) {
    if (patch[key] !== undefined) Object.assign(merged, { [key]: patch[key] });
  }
  const policy: PacingPolicy = { timezone: merged.timezone };
  if (merged.warmup) policy.warmup = merged.warmup;
  if (merged.dailyCap !== null) policy.dailyCap = merged.dailyCap;
  if (merged.quietHours) policy.quietHours = merged.quietHours;
  if (merged.unansweredLimit !== null) policy.unansweredLimit = merged.unansweredLimit;
  if (merged.typing) policy.typing = true;
  return policy;
}
