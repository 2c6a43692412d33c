import Type from 'typebox';
import { SessionState, Timestamp } from './common.js';

export const SessionStateSchema = Type.Object({
  state: SessionState,
  phone: Type.Optional(Type.String({ pattern: '^[0-9]{5,20}$', description: 'Number of the linked account.' })),
  since: Timestamp,
  lastError: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});
