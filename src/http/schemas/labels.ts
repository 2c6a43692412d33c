import Type from 'typebox';
import { LabelId } from './chats.js';
import { ChatId } from './send.js';

export const LabelSchema = Type.Object({
  labelId: LabelId,
  name: Type.String({ description: 'As shown on the phone.' }),
  color: Type.Integer({ minimum: 0, maximum: 19, description: "WhatsApp's colour index." }),
});

export const LabelListSchema = Type.Object({ items: Type.Array(LabelSchema) });

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
