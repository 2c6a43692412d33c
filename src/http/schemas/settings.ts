import Type from 'typebox';
import { HISTORY_SYNC_SETTINGS } from '../../settings/settings-events.js';

const Message = Type.String({
  minLength: 1,
  maxLength: 4096,
  description: 'Sent to a caller whose call was rejected.',
});
const ProxyShown = Type.String({ description: "The proxy's URL, its credentials shown as `***`." });

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
  },
  {
    additionalProperties: false,
    minProperties: 1,
    examples: [{ rejectCalls: true, rejectCallsMessage: 'Calls are not answered here; please write.' }],
  },
);
