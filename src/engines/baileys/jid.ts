/**
 * The gateway speaks in phone digits ("4915112345678"); WhatsApp in JIDs ("4915112345678@s.whatsapp.net",
 * "4915112345678:3@s.whatsapp.net" for one of the account's devices, "12345…@lid" for a privacy id).
 */
import {
  isHostedLidUser,
  isHostedPnUser,
  isJidBroadcast,
  isJidGroup,
  isJidNewsletter,
  isLidUser as isPlainLidUser,
  isPnUser as isPlainPnUser,
  jidDecode,
} from 'baileys';

const PHONE_SERVER = 's.whatsapp.net';

/** A phone-number user; `@hosted` is the same person reached through a Meta-hosted (business) device. */
const isPnUser = (jid: string) => !!(isPlainPnUser(jid) || isHostedPnUser(jid));
export const isLidUser = (jid: string) => !!(isPlainLidUser(jid) || isHostedLidUser(jid));

export function jidOfPhone(digits: string): string {
  return `${digits}@${PHONE_SERVER}`;
}

/** The digits of a phone-number JID (any device suffix dropped); undefined for LIDs, groups and others. */
export function phoneOfJid(jid: string | null | undefined): string | undefined {
  if (!jid || !isPnUser(jid)) return undefined;
  const user = jidDecode(jid)?.user;
  return user && /^\d+$/.test(user) ? user : undefined;
}

/** The account-level JID ("…@s.whatsapp.net" without device suffix) of a phone-number JID. */
export function normalizedPhoneJid(jid: string): string | undefined {
  const phone = phoneOfJid(jid);
  return phone === undefined ? undefined : jidOfPhone(phone);
}

/** The digits a LID is made of: the last resort when a LID cannot be mapped to a phone number. */
export function digitsOfLid(jid: string | null | undefined): string | undefined {
  if (!jid || !isLidUser(jid)) return undefined;
  const user = jidDecode(jid)?.user;
  return user && /^\d+$/.test(user) ? user : undefined;
}

/** One-to-one chats only: the gateway's API has no notion of groups, broadcasts or channels. */
export function isDirectChat(jid: string | null | undefined): jid is string {
  return (
    !!jid && !isJidGroup(jid) && !isJidBroadcast(jid) && !isJidNewsletter(jid) && (isPnUser(jid) || isLidUser(jid))
  );
}

/** The JID of a chat id: a number is a phone-number user; group and `@lid` ids are JIDs already. */
export function jidOfChat(chatId: string): string {
  return /^\d+$/.test(chatId) ? jidOfPhone(chatId) : chatId;
}

/** Groups and direct chats (phone numbers and LIDs); not status broadcasts, lists or channels. */
export function isSupportedChat(jid: string | null | undefined): jid is string {
  return !!jid && (isJidGroup(jid) === true || isDirectChat(jid));
}

export const isGroupJid = (jid: string | null | undefined): boolean => !!jid && isJidGroup(jid) === true;
