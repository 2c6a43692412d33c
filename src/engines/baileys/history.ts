/**
 * History sync on Baileys: what `messaging-history.set` brings (WhatsApp's chunks of the account's history, sent
 * when a device links and when older messages of a chat are asked for) as the gateway's HistoryChunk, and which
 * chunks the device's `historySync` setting lets Baileys download at all (on-demand ones always) (docs/api-guide.md, "Managing chats, search
 * and history sync").
 */
import { createHash } from 'node:crypto';
import { type BaileysEventMap, proto } from 'baileys';
import type { DeviceSettings } from '../../settings/settings-events.js';

type HistorySet = BaileysEventMap['messaging-history.set'];
const { HistorySyncType } = proto.HistorySync;

/**
 * Which history notifications Baileys downloads and processes (its `shouldSyncHistoryMessage`): none with
 * `historySync: none`; with `recent` (the default) all but the full history, which only `full` asks for
 * (`syncFullHistory`) and takes.
 */
export function historySyncOptions(setting: DeviceSettings['historySync'] | undefined): {
  syncFullHistory: boolean;
  shouldSyncHistoryMessage: (message: proto.Message.IHistorySyncNotification) => boolean;
} {
  const mode = setting ?? 'recent';
  return {
    syncFullHistory: mode === 'full',
    // The notification's type is its own enum (proto.Message.HistorySyncType), numbered as HistorySync's.
    // An on-demand chunk answers a request made through the API (POST /chats/:chatId/history): taken in any mode.
    shouldSyncHistoryMessage: ({ syncType }) =>
      mode === 'full' ||
      Number(syncType) === Number(HistorySyncType.ON_DEMAND) ||
      (mode === 'recent' && Number(syncType) !== Number(HistorySyncType.FULL)),
  };
}

/** The kinds of chunk that carry messages and chats (the others are push names, statuses' bootstrap, …). */
const WITH_MESSAGES: ReadonlySet<number> = new Set([
  HistorySyncType.INITIAL_BOOTSTRAP,
  HistorySyncType.RECENT,
  HistorySyncType.FULL,
  HistorySyncType.ON_DEMAND,
]);

/** Whether a chunk holds history to import (a chunk without a type is taken as messages, as Baileys treats it). */
export function carriesMessages(set: Pick<HistorySet, 'syncType'>): boolean {
  return set.syncType === undefined || set.syncType === null || WITH_MESSAGES.has(set.syncType);
}

/**
 * The chunk's id, the same whenever WhatsApp sends the same chunk again (a reconnect during the sync): its type,
 * its place in the sync and the messages it holds. The gateway derives every event id of the import from it.
 */
export function syncIdOf(set: Pick<HistorySet, 'syncType' | 'chunkOrder' | 'messages' | 'chats'>): string {
  const hash = createHash('sha1');
  hash.update(`${set.syncType ?? ''}:${set.chunkOrder ?? ''}:`);
  for (const message of set.messages) hash.update(`${message.key.remoteJid ?? ''}/${message.key.id ?? ''};`);
  if (set.messages.length === 0) for (const chat of set.chats) hash.update(`${chat.id};`);
  return hash.digest('hex').slice(0, 32);
}

/**
 * The last chunk of a sync: Baileys says `isLatest`, or the progress reached 100; an on-demand chunk is the whole
 * answer to its request (Baileys says no `isLatest` for those).
 */
export function isFinal(set: Pick<HistorySet, 'isLatest' | 'progress' | 'syncType'>): boolean {
  return (
    set.isLatest === true ||
    (typeof set.progress === 'number' && set.progress >= 100) ||
    set.syncType === HistorySyncType.ON_DEMAND
  );
}
