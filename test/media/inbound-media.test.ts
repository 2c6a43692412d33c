/**
 * Received media are downloaded when a message arrives, not in its turn to be recorded: a device's
 * messages are recorded one at a time, and downloading each only in its turn made every message wait for
 * the downloads of those before it.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { PassThrough, Readable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { MessageSink } from '../../src/actors/message-sink.js';
import type { InboundMessage } from '../../src/engines/engine.js';
import { InboundMediaSink } from '../../src/media/inbound-media.js';
import { InboundMediaStore } from '../../src/media/inbound-media-store.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp-dir.js';

/** Records what reaches it; fails the first `failures` received calls (a store that refuses, then takes it). */
class RecordingSink implements MessageSink {
  readonly received_: InboundMessage[] = [];
  constructor(private failures = 0) {}
  async received(_deviceId: string, message: InboundMessage): Promise<void> {
    if (this.failures > 0) {
      this.failures -= 1;
      throw Object.assign(new Error('the store is busy'), { code: 'SQLITE_BUSY' });
    }
    this.received_.push(message);
  }
  async receipt(): Promise<void> {}
  async contacts(): Promise<void> {}
}

const settings = {
  enabled: true,
  maxBytes: 1 << 20,
  fileMaxBytes: 1 << 20,
  quickRetryDelaysMs: [],
  backgroundRetryDelaysMs: [],
};
const noInbox = { record: async () => 0 };

function image(waMessageId: string, open: () => Promise<Readable>): InboundMessage {
  return {
    waMessageId,
    from: '4915111111111',
    type: 'image',
    body: '',
    timestamp: 1_700_000_000,
    media: { mimetype: 'image/jpeg' },
    downloadMedia: open,
  };
}

describe('received media downloads', () => {
  it('start when the message arrives: a later message is downloaded while an earlier one still is', async () => {
    const files = new InboundMediaStore(tempDir('dmg-media-sink-'));
    const inner = new RecordingSink();
    const sink = new InboundMediaSink(inner, files, noInbox, settings, pino({ level: 'silent' }));
    const slow = new PassThrough();
    const opened = { A: 0, B: 0 };
    const a = image('A', async () => (opened.A++, slow));
    const b = image('B', async () => (opened.B++, Readable.from([Buffer.from('bbbb')])));

    sink.arriving('dev', a);
    sink.arriving('dev', b);
    // B is stored before A's download has ended, and before either was recorded.
    await eventually(() => existsSync(files.pathOf('dev', 'B')));
    expect(existsSync(files.pathOf('dev', 'A'))).toBe(false);
    expect(inner.received_).toEqual([]);

    slow.end(Buffer.from('aaaa'));
    await sink.received('dev', a);
    await sink.received('dev', b);
    expect(inner.received_.map((m) => [m.waMessageId, m.media?.status, m.media?.sha256])).toEqual([
      ['A', 'ready', createHash('sha256').update('aaaa').digest('hex')],
      ['B', 'ready', createHash('sha256').update('bbbb').digest('hex')],
    ]);
    expect(readFileSync(files.pathOf('dev', 'A'), 'utf8')).toBe('aaaa');
    // Each downloaded once: the turn to be recorded used the download started on arrival.
    expect(opened).toEqual({ A: 1, B: 1 });
  });

  it('downloads once when recording is tried again, and also without an arrival notice', async () => {
    const files = new InboundMediaStore(tempDir('dmg-media-sink-'));
    const inner = new RecordingSink(1);
    const sink = new InboundMediaSink(inner, files, noInbox, settings, pino({ level: 'silent' }));
    let opened = 0;
    const message = image('C', async () => (opened++, Readable.from([Buffer.from('cccc')])));
    await expect(sink.received('dev', message)).rejects.toThrow('busy');
    await sink.received('dev', message);
    expect(opened).toBe(1);
    expect(inner.received_.map((m) => m.media?.status)).toEqual(['ready']);
  });

  it('a message abandoned before it is recorded leaves no file once its download has ended', async () => {
    let saved = 0;
    const files = new (class extends InboundMediaStore {
      override async save(...args: Parameters<InboundMediaStore['save']>) {
        const kept = await super.save(...args);
        saved += 1;
        return kept;
      }
    })(tempDir('dmg-media-sink-'));
    const sink = new InboundMediaSink(new RecordingSink(), files, noInbox, settings, pino({ level: 'silent' }));
    const slow = new PassThrough();
    const message = image('D', async () => slow);
    sink.arriving('dev', message);
    // Abandoned while its download is still under way: the file it then writes goes.
    sink.abandoned('dev', message);
    slow.end(Buffer.from('dddd'));
    await eventually(() => saved === 1);
    await eventually(() => !existsSync(files.pathOf('dev', 'D')));

    const done = image('E', async () => Readable.from([Buffer.from('eeee')]));
    sink.arriving('dev', done);
    await eventually(() => existsSync(files.pathOf('dev', 'E')));
    sink.abandoned('dev', done);
    await eventually(() => !existsSync(files.pathOf('dev', 'E')));
  });

  it('keeps the file of a message also arriving again, or recorded already', async () => {
    const files = new InboundMediaStore(tempDir('dmg-media-sink-'));
    const inner = new RecordingSink();
    const recorded = new Set<string>(['G']);
    // The messages whose abandonment asked whether they were recorded: that answer decides whether a file goes.
    const asked: string[] = [];
    const sink = new InboundMediaSink(inner, files, noInbox, settings, pino({ level: 'silent' }), (_deviceId, id) => {
      asked.push(id);
      return recorded.has(id);
    });
    const bytes = async () => Readable.from([Buffer.from('ffff')]);
    // The first arrival is abandoned (its connection closed) while WhatsApp's second one waits its turn.
    const first = image('F', bytes);
    const again = image('F', bytes);
    sink.arriving('dev', first);
    sink.arriving('dev', again);
    await eventually(() => existsSync(files.pathOf('dev', 'F')));
    sink.abandoned('dev', first);
    await sink.received('dev', again);
    // An arrival again of a message recorded earlier, then abandoned.
    const old = image('G', bytes);
    sink.arriving('dev', old);
    await eventually(() => existsSync(files.pathOf('dev', 'G')));
    sink.abandoned('dev', old);
    await eventually(() => asked.includes('G'), 'the abandoned arrival of G settled');
    expect(existsSync(files.pathOf('dev', 'F'))).toBe(true);
    expect(existsSync(files.pathOf('dev', 'G'))).toBe(true);
    expect(inner.received_.map((m) => m.media?.status)).toEqual(['ready']);
  });
});
