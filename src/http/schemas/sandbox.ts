import Type from 'typebox';

const PhoneNumber = (description: string) =>
  Type.String({ pattern: '^[0-9]{7,15}$', description: `${description} Digits only, with country code; numbers ending in 0000 do not exist in the sandbox.` });

export const ScanBody = Type.Object({ phone: PhoneNumber('The phone that scans the code: it becomes the account\'s number.') }, { additionalProperties: false });

export const InboundBody = Type.Object(
  {
    from: PhoneNumber('The sender.'),
    type: Type.Optional(Type.Literal('text', { description: 'Only `text` (the default).' })),
    body: Type.String({ maxLength: 65_536, description: 'The text.' }),
  },
  { additionalProperties: false },
);

export const InboundAcceptedSchema = Type.Object({
  waMessageId: Type.String({ description: 'The id the message arrives with (as `waMessageId` of `message.received`).' }),
});
