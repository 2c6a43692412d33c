/**
 * Baileys' AuthenticationState (creds + Signal keys) backed by AuthRecords, in the shape of Baileys' own
 * useMultiFileAuthState without loose files: `creds` is one record, rewritten on every `creds.update`; each
 * Signal key is one record, named `key/<type>/<id>` or, when encrypted, a keyed digest of that (key ids hold
 * contacts' numbers); `index` lists them (KeyIndex). All writes go through one serial queue and reads wait
 * for it, so a read never sees an older value than a write that started before it.
 */
import {
  type AuthenticationCreds,
  type AuthenticationState,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
  initAuthCreds,
  proto,
} from 'baileys';
import type { AuthRecords } from './auth-records.js';

const CREDS = 'creds';
const INDEX = 'index';
const keyName = (type: string, id: string) => `key/${type}/${id}`;

/** Where a key's record is: under a blinded name (`b`, encrypted deployments) or its clear name (`c`). */
type Placement = 'b' | 'c';

/**
 * type → key id → where its record is. It lets the whole state be wiped although the store cannot list or
 * delete snapshots, and spares a store read for keys that do not exist (Baileys asks for many). Written
 * before a new key (a crash leaves at worst an entry without a key, never a key nobody can find) and after a
 * key is erased.
 */
interface KeyIndex {
  keys: Record<string, Record<string, Placement>>;
}

export interface StoreAuthState {
  state: AuthenticationState;
  /** Persists `state.creds` as it is now (Baileys mutates it in place before emitting creds.update). */
  saveCreds(): Promise<void>;
  /** Resolves once every write queued so far is stored; rejects with the first write that failed since the last flush. */
  flush(): Promise<void>;
  /** Refuses every later write (they are dropped): used before the state is wiped, so nothing resurrects it. */
  stopWrites(): void;
}

/** Loads a device's auth state; a device without stored creds gets fresh ones (and will be asked for a QR). */
export async function loadStoreAuthState(records: AuthRecords): Promise<StoreAuthState> {
  const [storedCreds, storedIndex] = await Promise.all([
    records.read<AuthenticationCreds>(CREDS),
    records.read<KeyIndex>(INDEX),
  ]);
  const creds = storedCreds ?? initAuthCreds();
  const index = new Map<string, Map<string, Placement>>(
    Object.entries(storedIndex?.keys ?? {}).map(([type, ids]) => [type, new Map(Object.entries(ids))]),
  );
  const recordOf = (type: string, id: string, placement: Placement) =>
    records.placeOf(keyName(type, id), placement === 'b');
  const queue = new SerialQueue();
  let writable = true;

  const writeIndex = () =>
    records.write(INDEX, {
      keys: Object.fromEntries([...index].map(([type, ids]) => [type, Object.fromEntries(ids)])),
    } satisfies KeyIndex);

  const keys: SignalKeyStore = {
    async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      await queue.idle();
      const found: { [id: string]: SignalDataTypeMap[T] } = {};
      await Promise.all(
        ids.map(async (id) => {
          const placement = index.get(type)?.get(id);
          if (placement === undefined) return; // never written: no need to ask the store
          let value = await records.read<SignalDataTypeMap[T]>(recordOf(type, id, placement));
          if (value === undefined || value === null) return;
          if (type === 'app-state-sync-key') {
            value = proto.Message.AppStateSyncKeyData.fromObject(value as object) as unknown as SignalDataTypeMap[T];
          }
          found[id] = value;
        }),
      );
      return found;
    },
    async set(data: SignalDataSet) {
      if (!writable) return;
      await queue.run(async () => {
        const placement: Placement = records.blindsNames ? 'b' : 'c';
        const writes: Array<{ type: string; id: string; value: unknown; moved?: Placement }> = [];
        const erasures: Array<{ type: string; id: string; placement: Placement }> = [];
        for (const [type, values] of Object.entries(data)) {
          for (const [id, value] of Object.entries(values ?? {})) {
            const current = index.get(type)?.get(id);
            if (value === null || value === undefined) {
              if (current !== undefined) erasures.push({ type, id, placement: current });
            } else {
              // A key stored in clear before ENCRYPTION_KEY was set moves to its blinded name on its next write.
              writes.push({
                type,
                id,
                value,
                ...(current !== undefined && current !== placement ? { moved: current } : {}),
              });
            }
          }
        }
        const newEntries = writes.filter(({ type, id }) => index.get(type)?.get(id) !== placement);
        if (newEntries.length > 0) {
          for (const { type, id } of newEntries) entriesOf(index, type).set(id, placement);
          await writeIndex();
        }
        await Promise.all(writes.map(({ type, id, value }) => records.write(recordOf(type, id, placement), value)));
        await Promise.all([
          ...erasures.map(({ type, id, placement: at }) => records.erase(recordOf(type, id, at))),
          ...writes.flatMap(({ type, id, moved }) => (moved ? [records.erase(recordOf(type, id, moved))] : [])),
        ]);
        if (erasures.length > 0) {
          for (const { type, id } of erasures) index.get(type)?.delete(id);
          await writeIndex();
        }
      });
    },
  };

  return {
    state: { creds, keys },
    saveCreds: async () => {
      if (!writable) return;
      await queue.run(() => records.write(CREDS, creds));
    },
    flush: () => queue.idle(true),
    stopWrites: () => {
      writable = false;
    },
  };
}

/**
 * Erases creds, every indexed key and the index. When the index cannot be read (e.g. a different
 * ENCRYPTION_KEY) the creds are still erased, which is what unlinks the device; the unreadable key
 * records stay behind as ciphertext and the error says so.
 */
export async function wipeStoreAuthState(records: AuthRecords): Promise<void> {
  let index: KeyIndex | undefined;
  let indexError: unknown;
  try {
    index = await records.read<KeyIndex>(INDEX);
  } catch (error) {
    indexError = error;
  }
  await records.erase(CREDS);
  if (indexError) throw indexError;
  const names = Object.entries(index?.keys ?? {}).flatMap(([type, ids]) =>
    Object.entries(ids).map(([id, placement]) => records.placeOf(keyName(type, id), placement === 'b')),
  );
  await Promise.all(names.map((name) => records.erase(name)));
  await records.erase(INDEX);
}

function entriesOf(index: Map<string, Map<string, Placement>>, type: string): Map<string, Placement> {
  let entries = index.get(type);
  if (!entries) index.set(type, (entries = new Map()));
  return entries;
}

/** Runs tasks one after another; remembers the first failure until someone flushes. */
class SerialQueue {
  private tail: Promise<void> = Promise.resolve();
  private failure: unknown;

  run(task: () => Promise<void>): Promise<void> {
    const result = this.tail.then(task);
    this.tail = result.catch((error: unknown) => {
      this.failure ??= error;
    });
    return result;
  }

  /** Waits for every queued task; with `report`, rethrows (and clears) the first failure since the last report. */
  async idle(report = false): Promise<void> {
    await this.tail;
    if (report && this.failure !== undefined) {
      const failure = this.failure;
      this.failure = undefined;
      throw failure;
    }
  }
}
