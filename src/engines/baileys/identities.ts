/**
 * LID ↔ number pairs as Baileys makes them known: its LID mapping (`lid-mapping.update`) and the
 * alternative address a message's key carries (`remoteJidAlt`, `participantAlt`: the number when the
 * message came from a LID, or the LID when it came from a number). Only a pair of one phone JID and one
 * LID is taken; anything else is left out, never guessed.
 */
import type { IdentityPair } from '../engine.js';
import { digitsOfLid, phoneOfJid } from './jid.js';

type MaybeJid = string | null | undefined;

/** The pair two JIDs of one person make, in either order. */
export function identityOf(one: MaybeJid, other: MaybeJid): IdentityPair | undefined {
  const number = phoneOfJid(one) ?? phoneOfJid(other);
  const lid = digitsOfLid(one) ?? digitsOfLid(other);
  return number && lid ? { number, lid: `${lid}@lid` } : undefined;
}

/** The pairs of a message's key: the chat and its alternative, the group participant and theirs. */
export function identitiesOfKey(key: {
  remoteJid?: MaybeJid;
  remoteJidAlt?: MaybeJid;
  participant?: MaybeJid;
  participantAlt?: MaybeJid;
}): IdentityPair[] {
  return [identityOf(key.remoteJid, key.remoteJidAlt), identityOf(key.participant, key.participantAlt)].filter(
    (pair): pair is IdentityPair => pair !== undefined,
  );
}
