/**
 * A local WhatsApp server (@openclaw/crabline) that real Baileys connects to over its Noise handshake.
 * It accepts any companion that logs in with `creds.me` = its self JID (no QR pairing), records what it
 * receives, and injects inbound messages through its admin endpoint.
 */
import { join } from 'node:path';
import { type StartedWhatsAppServer, startWhatsAppServer } from '@openclaw/crabline';
import { initAuthCreds } from 'baileys';
import type { EventStore } from '../../../../src/eventstore/event-store.js';
import { AuthRecords } from '../../../../src/engines/baileys/auth/auth-records.js';
import type { ValueCipher } from '../../../../src/secrets/value-cipher.js';

export interface Crabline {
  server: StartedWhatsAppServer;
  socketUrl: string;
  selfJid: string;
  /** Digits of the account every companion logs in as. */
  selfPhone: string;
  /** Posts a text from `fromPhone` to the linked account, as a WhatsApp user would send it. */
  injectText(fromPhone: string, text: string, pushName?: string): Promise<{ id: string }>;
  /** Sends the server accepted (decrypted) from companions, in order. */
  acceptedSends(): Array<{ id: string; to: string; text: string | undefined }>;
  close(): Promise<void>;
}

export async function startCrabline(dir: string): Promise<Crabline> {
  const sends: Array<{ id: string; to: string; text: string | undefined }> = [];
  const server = await startWhatsAppServer({
    recorderPath: join(dir, 'crabline.jsonl'),
    host: '127.0.0.1',
    onEvent: (event) => {
      // An accepted send is recorded as the decrypted message the companion sent.
      const body = event.body as
        | { key?: { id?: string; remoteJid?: string; fromMe?: boolean }; message?: { conversation?: string } }
        | undefined;
      const accepted = (event as { accepted?: boolean }).accepted;
      const key = body?.key;
      if (accepted && key?.fromMe && key.id && key.remoteJid)
        sends.push({ id: key.id, to: key.remoteJid, text: body?.message?.conversation });
    },
  });
  const { manifest } = server;
  return {
    server,
    socketUrl: manifest.endpoints.baileysWebSocketUrl,
    selfJid: manifest.selfJid,
    selfPhone: manifest.selfJid.split('@')[0],
    async injectText(fromPhone, text, pushName) {
      const jid = `${fromPhone}@s.whatsapp.net`;
      const response = await fetch(manifest.endpoints.adminInboundUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-crabline-admin-token': manifest.adminToken },
        body: JSON.stringify({ chatJid: jid, senderJid: jid, text, ...(pushName ? { pushName } : {}) }),
      });
      const body = (await response.json()) as { message?: { key?: { id?: string } } };
      if (!response.ok || !body.message?.key?.id)
        throw new Error(`crabline refused the inbound message: ${response.status} ${JSON.stringify(body)}`);
      return { id: body.message.key.id };
    },
    acceptedSends: () => [...sends],
    close: () => server.close(),
  };
}

/**
 * Stores fresh Baileys credentials for the device, already linked to the server's account (creds.me):
 * what a device has after a QR scan, which crabline cannot do.
 */
export async function seedLinkedCreds(
  store: EventStore,
  deviceId: string,
  selfJid: string,
  cipher?: ValueCipher,
): Promise<void> {
  const creds = { ...initAuthCreds(), me: { id: selfJid, name: 'Crabline Account' } };
  await new AuthRecords(store, deviceId, cipher).write('creds', creds);
}
