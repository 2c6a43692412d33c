import Type from 'typebox';
import { HISTORY_SYNC_SETTINGS } from '../../settings/settings-events.js';

const Message = Type.String({
  minLength: 1,
  maxLength: 4096,
  description: 'Sent to a caller whose call was rejected.',
});
const ProxyShown = Type.String({ description: "The proxy's URL, its credentials shown as `***`." });

const HourMinute = Type.String({
  pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$',
  description: '`HH:MM`, 24 h.',
  examples: ['22:00'],
});
const Warmup = Type.Object(
  {
    startPerDay: Type.Integer({ minimum: 1, maximum: 100_000, description: 'The cap on the day of the link (day 0).' }),
    growthPercent: Type.Number({
      minimum: 0,
      maximum: 1_000,
      description: 'Each later day: × (1 + growthPercent/100).',
    }),
    maxPerDay: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'The cap never grows beyond this.' }),
  },
  {
    additionalProperties: false,
    description: "A daily cap that grows from the day the device's account was first linked.",
  },
);
const QuietHours = Type.Object(
  {
    from: HourMinute,
    to: HourMinute,
    allowReplies: Type.Optional(
      Type.Boolean({ description: 'Replies to a number that wrote in the last 24 h go during quiet hours too.' }),
    ),
  },
  {
    additionalProperties: false,
    description: 'No sends from `from` to `to` (local time; across midnight when `to` is earlier).',
  },
);
const Timezone = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'An IANA time zone (e.g. `Europe/Berlin`); default `UTC`.',
});
const DailyCap = Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Sends per calendar day in `timezone`.' });
const UnansweredLimit = Type.Integer({
  minimum: 1,
  maximum: 100_000,
  description:
    'At most this many sends to a number that never wrote to the account; the next is `409 recipient_unresponsive`.',
});
const Typing = Type.Boolean({
  description: 'Show "typing…" before each text (40 ms a character, 1 to 8 s), then send it.',
});

const PacingSchema = Type.Object(
  {
    timezone: Timezone,
    warmup: Type.Union([Warmup, Type.Null()]),
    dailyCap: Type.Union([DailyCap, Type.Null()]),
    quietHours: Type.Union([QuietHours, Type.Null()]),
    unansweredLimit: Type.Union([UnansweredLimit, Type.Null()]),
    typing: Typing,
  },
  {
    description:
      'How sends are paced so that the number is not banned. A send over the cap or inside quiet hours stays queued (`deferredUntil`) and goes when the window opens.',
  },
);

const PacingPatchSchema = Type.Object(
  {
    timezone: Type.Optional(Timezone),
    warmup: Type.Optional(Type.Union([Warmup, Type.Null()])),
    dailyCap: Type.Optional(Type.Union([DailyCap, Type.Null()])),
    quietHours: Type.Optional(Type.Union([QuietHours, Type.Null()])),
    unansweredLimit: Type.Optional(Type.Union([UnansweredLimit, Type.Null()])),
    typing: Type.Optional(Typing),
  },
  { additionalProperties: false, description: 'Each part optional; null turns a part off.' },
);

const HistorySync = Type.Enum(HISTORY_SYNC_SETTINGS, {
  description:
    "The account's history imported when the device links: `none`, `recent` (what the phone sends; default) or `full` (asked for at the next link).",
});

export const SettingsSchema = Type.Object({
  rejectCalls: Type.Boolean({
    description: 'Incoming calls are rejected (each is still a `call.received` event, `rejected: true`).',
  }),
  rejectCallsMessage: Type.Union([Message, Type.Null()]),
  proxy: Type.Union([ProxyShown, Type.Null()], {
    description: "The proxy this device's WhatsApp connection goes through, or null.",
  }),
  pacing: PacingSchema,
  historySync: HistorySync,
});

export const PatchSettingsBody = Type.Object(
  {
    rejectCalls: Type.Optional(Type.Boolean()),
    rejectCallsMessage: Type.Optional(Type.Union([Message, Type.Null()])),
    historySync: Type.Optional(HistorySync),
    proxy: Type.Optional(
      Type.Union([
        Type.String({
          minLength: 1,
          maxLength: 2048,
          pattern: '^([Hh][Tt][Tt][Pp][Ss]?|[Ss][Oo][Cc][Kk][Ss]5)://',
          description:
            '`http://`, `https://` or `socks5://` `[user:password@]host:port`. A host in a loopback, private or link-local range is refused unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true. ' +
            'Takes effect at the next (re)connect; null removes it. The proxy exactly as GET shows it (credentials `***`) keeps the stored one, credentials and all; ' +
            '`***` credentials in any other URL are refused (`400`).',
        }),
        Type.Null(),
      ]),
    ),
    pacing: Type.Optional(PacingPatchSchema),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    examples: [{ rejectCalls: true, rejectCallsMessage: 'Calls are not answered here; please write.' }],
  },
);
