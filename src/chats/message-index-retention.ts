/**
 * What the media retention sweep (media-retention.ts) reads of the message index: the stored media of messages
 * deleted for everyone, and those stored before the retention period.
 */
import type Database from 'better-sqlite3';

export class MessageIndexRetention {
  private statements: ReturnType<MessageIndexRetention['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  /** Stored media of messages deleted for everyone after log position `after`, in the order of the deletions. */
  revokedMediaAfter(after: number, limit: number): Array<{ deviceId: string; waMessageId: string; revokedAt: number }> {
    return this.sql()
      .revokedMedia.all(after, limit)
      .map((r) => ({ deviceId: r.device_id, waMessageId: r.wa_message_id, revokedAt: r.revoked_pos }));
  }

  /** Received media stored before `before` (epoch ms), oldest first: the retention sweep removes their files. */
  mediaStoredBefore(
    before: number,
    limit: number,
    after = 0,
  ): Array<{ deviceId: string; waMessageId: string; storedAt: number }> {
    return this.sql()
      .mediaBefore.all(after, before, limit)
      .map((r) => ({ deviceId: r.device_id, waMessageId: r.wa_message_id, storedAt: r.media_stored_at }));
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    return {
      revokedMedia: db.prepare<[number, number], { device_id: string; wa_message_id: string; revoked_pos: number }>(
        'SELECT device_id, wa_message_id, revoked_pos FROM chat_messages WHERE revoked_pos > ? AND media_stored_at IS NOT NULL ORDER BY revoked_pos LIMIT ?',
      ),
      mediaBefore: db.prepare<
        [number, number, number],
        { device_id: string; wa_message_id: string; media_stored_at: number }
      >(
        'SELECT device_id, wa_message_id, media_stored_at FROM chat_messages WHERE media_stored_at > ? AND media_stored_at < ? ORDER BY media_stored_at LIMIT ?',
      ),
    };
  }
}
