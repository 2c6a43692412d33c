import Type from 'typebox';
import { ENGINES } from '../../config.js';
import { Cursor, DeviceId, Limit, SessionDiagnostics, SessionState, Timestamp } from './common.js';

export const METADATA_MAX_BYTES = 4096;

const Name = Type.String({ minLength: 1, maxLength: 200, description: 'A label for people.' });
const Engine = Type.Enum(ENGINES, {
  description: '`baileys` (WhatsApp Web multi-device) or `sandbox` (the built-in simulated network).',
});
const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  description: `Free-form JSON object kept with the device (at most ${METADATA_MAX_BYTES} bytes as JSON).`,
});

export const DeviceSchema = Type.Object({
  id: DeviceId,
  name: Name,
  engine: Engine,
  metadata: Metadata,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  session: Type.Object({
    state: SessionState,
    phone: Type.Optional(Type.String({ pattern: '^[0-9]{5,20}$' })),
    ...SessionDiagnostics,
  }),
});

export const DeviceWithKeySchema = Type.Object({
  ...DeviceSchema.properties,
  deviceKey: Type.String({ pattern: '^dk_', description: 'The device key. Shown only in this answer: store it now.' }),
});

export const DeviceMaybeWithKeySchema = Type.Object({
  ...DeviceSchema.properties,
  deviceKey: Type.Optional(
    Type.String({ pattern: '^dk_', description: 'The new device key, when `rotateKey` was set. Shown only once.' }),
  ),
});

export const CreateDeviceBody = Type.Object(
  {
    id: Type.Optional(DeviceId),
    name: Name,
    engine: Type.Optional(Engine),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);

export const UpdateDeviceBody = Type.Object(
  {
    name: Type.Optional(Name),
    metadata: Type.Optional(Metadata),
    rotateKey: Type.Optional(
      Type.Boolean({ description: 'Issue a new device key; the old one stops working at once.' }),
    ),
  },
  { additionalProperties: false },
);

export const ListDevicesQuery = Type.Object({
  limit: Type.Optional(Limit(500, 50)),
  cursor: Type.Optional(Cursor),
  state: Type.Optional(SessionState),
});

export const DeviceListSchema = Type.Object({
  items: Type.Array(DeviceSchema),
  nextCursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as `cursor` for the next page; null on the last page.',
  }),
});
