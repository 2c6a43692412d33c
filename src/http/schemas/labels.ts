import Type from 'typebox';
import { LabelId } from './chats.js';
import { DeviceId } from './common.js';
import { ChatId } from './send.js';

export const LabelSchema = Type.Object({
  labelId: LabelId,
  name: Type.String({ description: 'As shown on the phone.' }),
  color: Type.Integer({ minimum: 0, maximum: 19, description: "WhatsApp's colour index." }),
});

export const LabelListSchema = Type.Object({ items: Type.Array(LabelSchema) });

export const LabelParams = Type.Object({ deviceId: DeviceId, labelId: LabelId });
export const ChatLabelParams = Type.Object({ deviceId: DeviceId, chatId: ChatId, labelId: LabelId });

const LabelName = Type.String({ minLength: 1, maxLength: 100, description: 'As the phone shows it.' });
const LabelColor = Type.Integer({ minimum: 0, maximum: 19, description: "WhatsApp's colour index (default 0)." });

/** POST /labels. */
export const LabelCreateBody = Type.Object(
  { name: LabelName, color: Type.Optional(LabelColor) },
  { additionalProperties: false, examples: [{ name: 'Paid', color: 3 }] },
);

/** PATCH /labels/:labelId. */
export const LabelPatchBody = Type.Object(
  { name: Type.Optional(LabelName), color: Type.Optional(LabelColor) },
  { additionalProperties: false, minProperties: 1, examples: [{ name: 'Paid in full' }] },
);

export const LabelDeletedSchema = Type.Object({ labelId: LabelId, deleted: Type.Literal(true) });

/** POST /sandbox/devices/:deviceId/labels: what the phone did to labels, in order. */
export const SandboxLabelsBody = Type.Object(
  {
    labels: Type.Optional(
      Type.Array(
        Type.Object(
          {
            labelId: LabelId,
            name: Type.String({ minLength: 1, maxLength: 100 }),
            color: Type.Optional(Type.Integer({ minimum: 0, maximum: 19, default: 0 })),
            deleted: Type.Optional(Type.Boolean({ description: 'The phone deleted the label.' })),
          },
          { additionalProperties: false },
        ),
        { maxItems: 100, description: 'Labels the phone made, changed or deleted.' },
      ),
    ),
    chats: Type.Optional(
      Type.Array(
        Type.Object(
          { chatId: ChatId, labelId: LabelId, action: Type.Union([Type.Literal('add'), Type.Literal('remove')]) },
          { additionalProperties: false },
        ),
        { maxItems: 100, description: 'Labels the phone put on chats or took off them.' },
      ),
    ),
  },
  { additionalProperties: false },
);
