import Type from 'typebox';

export const PacingStatusSchema = Type.Object({
  today: Type.Integer({ minimum: 0, description: "Sends started today (the local day in the pacing's `timezone`)." }),
  cap: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
    description: "Today's cap (the smaller of `dailyCap` and the warm-up's), null when none.",
  }),
  nextWindowAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When sends go again (the cap renews, the quiet hours end), null while they go now.',
  }),
  deferred: Type.Integer({ minimum: 0, description: 'Queued messages waiting for that window.' }),
});
