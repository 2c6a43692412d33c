/**
 * A small key-value store for one device's Baileys auth records (creds, Signal keys) in the event store's
 * snapshots: one snapshot stream per record, `baileys-auth-<deviceId>/<record>`, overwritten in place (SQLite)
 * or keeping only its latest event (EventStoreDB), and out of the log projections read. Values are serialised
 * with Baileys' BufferJSON and sealed when a cipher is given; erasing deletes the snapshot (tombstones of
 * earlier versions read as erased).
 */
import { BufferJSON } from 'baileys';
import type { EventStore } from '../../../eventstore/event-store.js';
import { type SealedValue, type ValueCipher, ValueDecryptionError } from '../../../secrets/value-cipher.js';

export const AUTH_RECORD_PREFIX = 'baileys-auth-';
const FORMAT = 1;

/** What a snapshot of an auth record holds. */
type StoredRecord =
  | { v: typeof FORMAT; json: string } // plaintext
  | { v: typeof FORMAT; sealed: SealedValue } // encrypted
  | { v: typeof FORMAT; erased: true }; // tombstone of earlier versions

/** A stored record cannot be read: encrypted without a key configured, a wrong key, or damaged. */
export class AuthRecordError extends Error {
  override readonly name = 'AuthRecordError';
  constructor(
    readonly record: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`auth record ${record}: ${message}`, options);
  }
}

export class AuthRecords {
  constructor(
    private readonly store: EventStore,
    readonly deviceId: string,
    private readonly cipher: ValueCipher | undefined,
  ) {}

  /** Whether new records with revealing names are kept under blinded names (that is: records are encrypted). */
  get blindsNames(): boolean {
    return this.cipher !== undefined;
  }

  /**
   * Where a record whose name reveals something (a contact's number in a Signal key id) is kept: under a
   * keyed digest of the name when `blind` (records are encrypted), under the name itself otherwise.
   */
  placeOf(name: string, blind: boolean): string {
    if (!blind) return name;
    if (!this.cipher)
      throw new AuthRecordError(this.streamOf(name), 'is stored under a blinded name but ENCRYPTION_KEY is not set');
    return `blind/${this.cipher.blindName(name)}`;
  }

  /** The snapshot stream of a record; also the AAD of its ciphertext, binding it to its place. */
  streamOf(name: string): string {
    return `${AUTH_RECORD_PREFIX}${this.deviceId}/${name}`;
  }

  /** undefined when the record was never written or was erased. */
  async read<T>(name: string): Promise<T | undefined> {
    const stream = this.streamOf(name);
    const snapshot = await this.store.loadSnapshot<StoredRecord>(stream);
    const record = snapshot?.state;
    if (!record || 'erased' in record) return undefined;
    if (record.v !== FORMAT) throw new AuthRecordError(stream, `unknown record format ${String(record.v)}`);
    // A plaintext record stays readable after ENCRYPTION_KEY is set; it is sealed on its next write.
    const json = 'json' in record ? record.json : this.open(stream, record.sealed);
    return JSON.parse(json, BufferJSON.reviver) as T;
  }

  async write(name: string, value: unknown): Promise<void> {
    const stream = this.streamOf(name);
    const json = JSON.stringify(value, BufferJSON.replacer);
    const record: StoredRecord = this.cipher
      ? { v: FORMAT, sealed: this.cipher.seal(json, stream) }
      : { v: FORMAT, json };
    await this.store.saveSnapshot(stream, { revision: 0, state: record });
  }

  async erase(name: string): Promise<void> {
    await this.store.deleteSnapshot(this.streamOf(name));
  }

  private open(stream: string, sealed: SealedValue): string {
    if (!this.cipher) throw new AuthRecordError(stream, 'is encrypted but ENCRYPTION_KEY is not set');
    try {
      return this.cipher.open(sealed, stream);
    } catch (error) {
      if (error instanceof ValueDecryptionError)
        throw new AuthRecordError(stream, `cannot be decrypted: ${error.message}`, { cause: error });
      throw error;
    }
  }
}
