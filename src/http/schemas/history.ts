import Type from 'typebox';
import { Limit, Timestamp } from './common.js';

export const HistoryQuery = Type.Object({
  direction: Type.Optional(
    Type.Enum(['forwards', 'backwards'], {
      default: 'forwards',
      description:
        '`forwards`: oldest first; `backwards`: newest first (the latest events without paging through the rest).',
    }),
  ),
  from: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        'Log position to start at (inclusive): the `next` of the previous page. Default: the first event forwards, the newest backwards.',
    }),
  ),
  limit: Type.Optional(Limit(1000, 100)),
});

export const HistoryPageSchema = Type.Object({
  items: Type.Array(
    Type.Object({
      position: Type.Integer({ description: 'Position in the whole log.' }),
      stream: Type.String({
        description: 'The stream it is on: device-, session-, inbox-, outbox-… followed by the device id.',
      }),
      revision: Type.Integer({ description: 'Its revision within that stream.' }),
      type: Type.String(),
      data: Type.Unknown({
        description: 'The event as stored, with secrets (key hashes, webhook secrets, credentials, QR codes) redacted.',
      }),
      createdAt: Timestamp,
    }),
  ),
  next: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Pass as `from` (in the same direction) for the next page; null at the end.',
  }),
});
