/**
 * The chat changes this connection made through `chatModify`. Baileys applies its own app-state patches locally
 * and emits them like the phone's (`emitOwnEvents`, on by default): without this, a change made through the API
 * would be recorded twice, once by the chat command and once as the "phone's" echo (docs/architecture.md,
 * "Chats"). An echo is recognised by chat (JID as sent) and field, and passed over once.
 */
import type { ChatActivity, ChatChange } from '../engine.js';

/** Baileys emits the echo while `chatModify` runs; a window this long only bounds what a lost echo leaves. */
const ECHO_WINDOW_MS = 60_000;

/** The field an echo carries for a change made by `modify`. */
export function echoFieldOf(change: ChatChange): string {
  if ('archived' in change) return 'archived';
  if ('pinned' in change) return 'pinned';
  if ('mutedUntilMs' in change) return 'mutedUntil';
  if ('unread' in change) return 'unread';
  return 'deleted' in change ? 'deleted' : 'cleared';
}

/** A label's echo names no chat (labels belong to the account). */
export const labelEchoKey = (labelId: string): string => `label/${labelId}`;
/** A chat label's echo, by the chat's JID as sent. */
export const chatLabelEchoKey = (jid: string, labelId: string): string => `${jid}/label/${labelId}`;

const CHAT_FIELDS = ['archived', 'pinned', 'mutedUntil', 'unread'] as const;

export class OwnChatChanges {
  /** Key (`<jid>/<field>` or `<jid>/<waMessageId>/<field>`) → when the wait for its echo ends. */
  private readonly pending = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Runs `change` expecting its echo; a change that failed expects none. */
  async expecting<T>(keys: string[], change: () => Promise<T>): Promise<T> {
    this.prune();
    for (const key of keys) this.pending.set(key, this.now() + ECHO_WINDOW_MS);
    try {
      return await change();
    } catch (error) {
      for (const key of keys) this.pending.delete(key);
      throw error;
    }
  }

  /** The activities less the echoes of this connection's own changes (each echo is passed over once). */
  withoutEchoes(activities: ChatActivity[]): ChatActivity[] {
    if (this.pending.size === 0) return activities;
    this.prune();
    return activities.flatMap((activity): ChatActivity[] => {
      switch (activity.kind) {
        case 'chat_updated': {
          const rest: Record<string, unknown> = { ...activity };
          for (const field of CHAT_FIELDS)
            if (field in rest && this.consume(`${activity.chatId}/${field}`)) delete rest[field];
          return CHAT_FIELDS.some((field) => field in rest) ? [rest as ChatActivity] : [];
        }
        case 'chat_deleted':
          return this.consume(`${activity.chatId}/${activity.cleared ? 'cleared' : 'deleted'}`) ? [] : [activity];
        case 'message_deleted':
          return this.consume(`${activity.chatId}/${activity.waMessageId}/deleted`) ? [] : [activity];
        case 'message_starred':
          return this.consume(`${activity.chatId}/${activity.waMessageId}/starred`) ? [] : [activity];
        case 'label_updated':
          return this.consume(labelEchoKey(activity.labelId)) ? [] : [activity];
        case 'chat_labels':
          return this.consume(chatLabelEchoKey(activity.chatId, activity.labelId)) ? [] : [activity];
        default:
          return [activity];
      }
    });
  }

  private consume(key: string): boolean {
    return this.pending.delete(key);
  }

  private prune(): void {
    const now = this.now();
    for (const [key, until] of this.pending) if (until < now) this.pending.delete(key);
  }
}
