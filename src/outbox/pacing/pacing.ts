/**
 * Pacing (docs/api-guide.md, "Numbers that stay safe"): how many sends a day a device may make (a fixed cap, a
 * warm-up that grows from the day the account was linked), the hours it keeps quiet, all in the device's IANA time
 * zone. Pure: the time, the sends counted and the policy come in; the outbox decider asks `pacingWindow` before each
 * try and defers the try (it stays queued) until the window it answers.
 */

export interface WarmupPolicy {
  startPerDay: number;
  growthPercent: number;
  maxPerDay: number;
}

export interface QuietHours {
  /** `HH:MM`, local time in the policy's time zone. */
  from: string;
  to: string;
  allowReplies?: boolean;
}

export interface PacingPolicy {
  /** IANA name; every day and hour below is in it. */
  timezone: string;
  warmup?: WarmupPolicy | null;
  dailyCap?: number | null;
  quietHours?: QuietHours | null;
  /** Sends to a number that never wrote to the account, at most; the next one is refused. */
  unansweredLimit?: number | null;
  /** Shows `composing` before each text for a time that grows with its length. */
  typing?: boolean;
}

export const DEFAULT_PACING: PacingPolicy = { timezone: 'UTC' };

/** What a try needs to be judged besides the outbox's own count. */
export interface PacingContext {
  policy: PacingPolicy;
  /** Epoch ms the device's account was first linked (day 0 of the warm-up); undefined: not known, day 0 now. */
  linkedAt?: number;
  /** The recipient wrote to the account at this epoch ms (the latest message); undefined: never (or not known). */
  lastInboundAt?: number;
}

export type PacingReason = 'daily_cap' | 'quiet_hours';

export type PacingVerdict = { go: true } | { go: false; until: number; reason: PacingReason };

const DAY_MS = 86_400_000;
const REPLY_WINDOW_MS = DAY_MS;
/** Typing: 40 ms a character, 1 to 8 s. */
const TYPING_MS_PER_CHAR = 40;
const TYPING_MIN_MS = 1_000;
const TYPING_MAX_MS = 8_000;

/** Whether `name` is an IANA time zone this runtime knows. */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

interface LocalTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The wall-clock time at `epoch` in `timeZone`. */
export function localTimeOf(epoch: number, timeZone: string): LocalTime {
  const parts: Record<string, number> = {};
  for (const part of formatterOf(timeZone).formatToParts(new Date(epoch))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return {
    year: parts.year,
    month: parts.month,
    day: parts.day,
    hour: parts.hour % 24,
    minute: parts.minute,
    second: parts.second,
  };
}

/** How far `timeZone` is ahead of UTC at `epoch` (ms). */
function offsetAt(epoch: number, timeZone: string): number {
  const local = localTimeOf(epoch, timeZone);
  const asUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  return asUtc - Math.floor(epoch / 1000) * 1000;
}

/**
 * The first moment at or after the wall-clock time given (month and day may overflow, as Date.UTC's do) in
 * `timeZone`: a time that a daylight-saving change skips is the moment the clocks jump to; one it repeats, the first.
 */
export function epochOfLocal(
  timeZone: string,
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
): number {
  const wall = Date.UTC(year, month - 1, day, hour, minute);
  // The offsets on either side of any change near `wall` (changes are at least days apart).
  const before = offsetAt(wall - DAY_MS, timeZone);
  const after = offsetAt(wall + DAY_MS, timeZone);
  const candidates = [wall - before, wall - after].filter((epoch) => {
    const local = localTimeOf(epoch, timeZone);
    return Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute) === wall;
  });
  if (candidates.length > 0) return Math.min(...candidates);
  // Skipped by a change: the moment after the gap, which both offsets put on the same side of.
  return Math.max(wall - before, wall - after);
}

/** Midnight (local) that starts the day `epoch` falls in. */
export function startOfDay(epoch: number, timeZone: string): number {
  const local = localTimeOf(epoch, timeZone);
  return epochOfLocal(timeZone, local.year, local.month, local.day, 0, 0);
}

/** Midnight (local) that starts the next day. */
export function startOfNextDay(epoch: number, timeZone: string): number {
  const local = localTimeOf(epoch, timeZone);
  return epochOfLocal(timeZone, local.year, local.month, local.day + 1, 0, 0);
}

/** Local calendar days from `from` to `to` (0: the same day). */
export function daysBetween(from: number, to: number, timeZone: string): number {
  const a = localTimeOf(from, timeZone);
  const b = localTimeOf(to, timeZone);
  return Math.round((Date.UTC(b.year, b.month - 1, b.day) - Date.UTC(a.year, a.month - 1, a.day)) / DAY_MS);
}

const minutesOf = (hhmm: string): number => {
  const [hours, minutes] = hhmm.split(':').map(Number);
  return hours * 60 + minutes;
};

/** The warm-up's cap on `day` (0: the day of the link). */
export function warmupCap(warmup: WarmupPolicy, day: number): number {
  const grown = warmup.startPerDay * (1 + warmup.growthPercent / 100) ** Math.max(0, day);
  return Math.min(warmup.maxPerDay, Math.floor(grown));
}

/** The day's cap at `now` (the smaller of the fixed cap and the warm-up's), null when neither is set. */
export function capAt(policy: PacingPolicy, now: number, linkedAt: number | undefined): number | null {
  const caps: number[] = [];
  if (policy.dailyCap !== undefined && policy.dailyCap !== null) caps.push(policy.dailyCap);
  if (policy.warmup) {
    const day = linkedAt === undefined ? 0 : daysBetween(linkedAt, now, policy.timezone);
    caps.push(warmupCap(policy.warmup, day));
  }
  return caps.length === 0 ? null : Math.min(...caps);
}

/** Whether `epoch` falls inside the quiet hours (`from` → `to`, across midnight when `to` is earlier). */
export function inQuietHours(quiet: QuietHours, epoch: number, timeZone: string): boolean {
  const from = minutesOf(quiet.from);
  const to = minutesOf(quiet.to);
  if (from === to) return false;
  const local = localTimeOf(epoch, timeZone);
  const minute = local.hour * 60 + local.minute;
  return from < to ? minute >= from && minute < to : minute >= from || minute < to;
}

/** When the quiet hours that hold at `epoch` end: the next local `to`. */
export function quietHoursEnd(quiet: QuietHours, epoch: number, timeZone: string): number {
  const local = localTimeOf(epoch, timeZone);
  const to = minutesOf(quiet.to);
  const today = epochOfLocal(timeZone, local.year, local.month, local.day, Math.floor(to / 60), to % 60);
  if (today > epoch) return today;
  return epochOfLocal(timeZone, local.year, local.month, local.day + 1, Math.floor(to / 60), to % 60);
}

/** Whether a send at `now` replies to the recipient (they wrote in the last 24 h). */
export const isReply = (context: PacingContext, now: number): boolean =>
  context.lastInboundAt !== undefined && now - context.lastInboundAt <= REPLY_WINDOW_MS;

/**
 * Whether a try may start at `now`, `sentToday` being the sends started since local midnight; if not, when the window
 * opens again (the next day's midnight for a cap, the end of the quiet hours, whichever holds longer).
 */
export function pacingWindow(
  context: PacingContext,
  now: number,
  sentToday: (dayStart: number) => number,
): PacingVerdict {
  const { policy } = context;
  const { timezone } = policy;
  const quiet = policy.quietHours;
  const quietApplies = (at: number) =>
    !!quiet && inQuietHours(quiet, at, timezone) && !(quiet.allowReplies && isReply(context, now));
  let until = now;
  let reason: PacingReason | undefined;
  // A few rounds settle it: a cap's next day may begin inside quiet hours, whose end is then the window.
  for (let round = 0; round < 4; round += 1) {
    if (quietApplies(until)) {
      until = quietHoursEnd(quiet!, until, timezone);
      reason ??= 'quiet_hours';
      continue;
    }
    // Sends counted are today's: a later day starts with none (caps are at least 1).
    const dayStart = startOfDay(now, timezone);
    const cap = capAt(policy, until, context.linkedAt);
    if (cap !== null && until < startOfNextDay(now, timezone) && sentToday(dayStart) >= cap) {
      until = startOfNextDay(now, timezone);
      reason ??= 'daily_cap';
      continue;
    }
    break;
  }
  return reason === undefined ? { go: true } : { go: false, until, reason };
}

/** How long the contact sees "typing…" before a text of `length` characters. */
export const typingMs = (length: number): number =>
  Math.min(TYPING_MAX_MS, Math.max(TYPING_MIN_MS, length * TYPING_MS_PER_CHAR));
