/**
 * Baileys' `contacts.upsert` / `contacts.update` entries mapped to the gateway's Contact. A contact is
 * reported only when its phone number is known: the API addresses people by number, and a LID alone
 * (WhatsApp's privacy id) cannot be written to.
 */
import type { Contact as BaileysContact } from 'baileys';
import type { Contact } from '../engine.js';
import { jidOfPhone, phoneOfJid } from './jid.js';

export function contactsOf(entries: ReadonlyArray<Partial<BaileysContact>>): Contact[] {
  const contacts: Contact[] = [];
  for (const entry of entries) {
    const number = phoneOfJid(entry.phoneNumber) ?? phoneOfJid(entry.id);
    if (!number) continue;
    const name = entry.name || entry.verifiedName || undefined;
    contacts.push({
      number,
      jid: jidOfPhone(number),
      ...(name ? { name } : {}),
      ...(entry.notify ? { pushName: entry.notify } : {}),
    });
  }
  return contacts;
}
