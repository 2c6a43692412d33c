/**
 * A device outbox told of an event another process appended to its stream (seen in the log, DeviceOutbox.noteEvent):
 * taken in without reading the stream when it can, so that its next append meets no conflict (issue 30).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppendOptions, NewEvent, ReadStreamOptions } from '../../../src/eventstore/event-store.js';
import { DelegatingEventStore } from '../../../src/eventstore/delegating-store.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { outboxStream } from '../../../src/messages/message-events.js';
import { DeviceOutbox } from '../../../src/outbox/stream/device-outbox.js';
import { tempDir } from '../../support/temp-dir.js';
import { queueCommand } from '../support/queue-command.js';

const DEVICE = 'shop-1';
const queue = (n: number) => queueCommand(DEVICE, n);
const seqOf = (executed: { result: { kind: string; message?: { seq: number } } }) => executed.result.message?.seq;

/** A process's view of the file that counts its reads of the outbox stream and the appends decided again. */
class Counting extends DelegatingEventStore {
  reads = 0;
  decidedAgain = 0;
  override readStream(streamId: string, options?: ReadStreamOptions) {
    this.reads += 1;
    return super.readStream(streamId, options);
  }
  override append(streamId: string, events: readonly NewEvent[], options: AppendOptions = {}) {
    const { onConflict } = options;
    return super.append(streamId, events, {
      ...options,
      ...(onConflict && {
        onConflict: (newer) => {
          this.decidedAgain += 1;
          return onConflict(newer);
        },
      }),
    });
  }
}

describe('a device outbox told of what another process appended', () => {
  const stores: SqliteEventStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  async function twoProcesses() {
    const file = join(tempDir('dmg-outbox-noted-'), 'events.sqlite');
    const [sa, sb] = [
      new SqliteEventStore(file, { sharedFile: true }),
      new SqliteEventStore(file, { sharedFile: true }),
    ];
    stores.push(sa, sb);
    const here = new Counting(sa);
    const a = await DeviceOutbox.load(here, DEVICE, { pipeline: false });
    const b = await DeviceOutbox.load(sb, DEVICE, { pipeline: false });
    here.reads = 0;
    /** What the other process appended, as this process's log follower sees it. */
    const appendedByB = async (n: number) => {
      const { position } = await b.execute(queue(n));
      const [event] = await sb.readAll({ from: position, maxCount: 1 });
      return event;
    };
    return { here, a, appendedByB, file: sa };
  }

  it('folds the next event of an idle outbox: no read of the stream, and its next append is not decided again', async () => {
    const { here, a, appendedByB, file } = await twoProcesses();
    for (const n of [1, 2]) expect(a.noteEvent(await appendedByB(n), false)).toBe('folded');
    expect(a.current.lastSeq).toBe(2);
    expect(seqOf(await a.execute(queue(3)))).toBe(3);
    expect(here.reads).toBe(0);
    expect(here.decidedAgain).toBe(0);
    const stored = await file.readStream(outboxStream(DEVICE));
    expect(stored.map((e) => (e.data as { seq: number }).seq)).toEqual([1, 2, 3]);
  });

  it('takes an event it holds already (its own, or one folded) as nothing new', async () => {
    const { a, appendedByB, file } = await twoProcesses();
    const event = await appendedByB(1);
    expect(a.noteEvent(event, true)).toBe('folded');
    expect(a.noteEvent(event, true)).toBe(false);
    const { position } = await a.execute(queue(2));
    const [own] = await file.readAll({ from: position, maxCount: 1 });
    expect(a.noteEvent(own, true)).toBe(false);
  });

  it('does not fold past a gap: the owner reads the stream before its next decision, another process decides again in its append', async () => {
    const owner = await twoProcesses();
    await owner.appendedByB(1);
    // The first event was not seen (the follower is behind): the second does not follow the state.
    expect(owner.a.noteEvent(await owner.appendedByB(2), true)).toBe('behind');
    expect(seqOf(await owner.a.execute(queue(3)))).toBe(3);
    expect(owner.here.reads).toBe(1);
    expect(owner.here.decidedAgain).toBe(0);

    const other = await twoProcesses();
    await other.appendedByB(1);
    expect(other.a.noteEvent(await other.appendedByB(2), false)).toBe(false);
    expect(seqOf(await other.a.execute(queue(3)))).toBe(3);
    expect(other.here.reads).toBe(0);
    expect(other.here.decidedAgain).toBe(1);
  });
});
