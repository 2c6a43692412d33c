/**
 * search: `GET /devices/:id/messages?q=` on 1,000,000 received messages of one device over 1,000 chats (texts of
 * eight words drawn from a vocabulary of 20,000 with Zipf frequencies, as words of a language are), written straight
 * into the store and every read model rebuilt (the search index filled once at its end); then a gateway on that data
 * at 10 connections: queries as people type them (one or two words, drawn by frequency, the 50 most common words
 * left out as they are in any search box), first pages and next pages by cursor; and the most common word alone,
 * whose matches are half the messages (no target: the worst case, to watch).
 *
 * `BENCH_SEARCH_MESSAGES` sizes it down for a short check (e.g. 20000).
 */
import { generateDeviceKey, hashKey } from '../src/auth/keys.js';
import { deviceStream } from '../src/devices/device-events.js';
import { encodeCursor } from '../src/http/cursor.js';
import { inboxStream } from '../src/inbox/inbox-events.js';
import type { Metric } from './lib/benchmark.js';
import { type LogEvent, writeLogDirect } from './lib/event-log.js';
import { loadHttp } from './lib/http-load.js';
import { mulberry32, zipfSampler } from './lib/random.js';
import { round } from './lib/stats.js';
import { serveDataDir } from './lib/served-data-dir.js';
import { makeTempDir } from './lib/temp.js';
import { rebuildAll } from './rebuild.js';

export const name = 'search';
export const description = 'GET /messages?q= on 1,000,000 messages of one device over 1,000 chats, 10 connections';

const MESSAGES = Number(process.env.BENCH_SEARCH_MESSAGES ?? 1_000_000);
const CHATS = 1_000;
const VOCABULARY = 20_000;
const WORDS_PER_MESSAGE = 8;
/** The most common words, which a search box is not used for ("the", "and"): left out of the typed queries. */
const STOP_WORDS = 50;
const T0 = 1_790_000_000;
const ADMIN_KEY = `ak_bench_${'0'.repeat(32)}`;
const DEVICE = 'search-0';

export async function run(): Promise<Metric[]> {
  const data = makeTempDir('search');
  try {
    const words = vocabulary();
    const key = generateDeviceKey();
    const started = performance.now();
    const events = await writeLogDirect(data.path, searchEvents(key, words));
    const writeSeconds = (performance.now() - started) / 1000;
    const rebuild = await rebuildAll(data.path);
    const server = await serveDataDir(data.path, ADMIN_KEY);
    try {
      const headers = { 'X-Device-Key': key };
      const random = mulberry32(7);
      const zipf = zipfSampler(VOCABULARY, random);
      const typedWord = () => {
        let rank = zipf();
        while (rank < STOP_WORDS) rank = zipf();
        return words[rank];
      };
      // A page's cursors, learnt from answers: the next pages people ask for.
      const cursors: string[] = [];
      const base = `/devices/${DEVICE}/messages`;
      const typed = () => {
        if (cursors.length > 0 && random() < 0.3) return cursors[Math.floor(random() * cursors.length)];
        const q = random() < 0.5 ? typedWord() : `${typedWord()} ${typedWord()}`;
        return `${base}?q=${encodeURIComponent(q)}&limit=50`;
      };
      await learnCursors(server.url, headers, base, typedWord, cursors);
      const load = (nextPath: () => string) =>
        loadHttp({
          url: `${server.url}${nextPath()}`,
          headers,
          nextPath,
          connections: 10,
          warmupSeconds: 2,
          durationSeconds: 8,
          serverCpuSeconds: () => server.cpuSeconds(),
        });
      const searches = await load(typed);
      const common = await load(() => `${base}?q=${words[0]}&limit=50`);
      // The same word's pages anywhere in the log (a cursor at a random message), and its first page in one chat.
      const deep = await load(() => {
        const k = Math.floor(random() * MESSAGES);
        return `${base}?q=${words[0]}&limit=50&cursor=${encodeCursor(`${T0 + Math.floor(k / 20)}:${k + 2}`)}`;
      });
      const inChat = await load(() => `${base}?q=${words[0]}&limit=50&chatId=${chatOf(Math.floor(random() * CHATS))}`);
      const failures = [searches, common, deep, inChat].reduce((sum, run) => sum + run.non2xx + run.errors, 0);
      return [
        { metric: 'messages in the log', value: MESSAGES, unit: 'messages' },
        { metric: 'events in the log', value: events, unit: 'events' },
        { metric: 'log written straight into the store', value: round(writeSeconds, 1), unit: 's' },
        {
          metric: 'rebuild of every read model (search index included)',
          value: Math.round(rebuild.events / rebuild.seconds),
          unit: 'events/s',
        },
        {
          metric: 'GET /messages?q= (typed words, first and next pages), req/s',
          value: Math.round(searches.requestsPerSecond),
          unit: 'req/s',
        },
        {
          metric: 'GET /messages?q= (typed words, first and next pages), p99',
          value: round(searches.latency.p99, 2),
          unit: 'ms',
          target: { op: '<=', value: 50 },
        },
        { metric: 'GET /messages?q=<most common word>, p99', value: round(common.latency.p99, 2), unit: 'ms' },
        {
          metric: 'GET /messages?q=<most common word>, req/s',
          value: Math.round(common.requestsPerSecond),
          unit: 'req/s',
        },
        { metric: 'the same, pages at random depths, p99', value: round(deep.latency.p99, 2), unit: 'ms' },
        { metric: 'the same, first pages of one chat (chatId), p99', value: round(inChat.latency.p99, 2), unit: 'ms' },
        { metric: 'non-2xx answers and errors', value: failures, unit: 'requests', target: { op: '<=', value: 0 } },
      ];
    } finally {
      await server.stop();
    }
  } finally {
    data.remove();
  }
}

/** Asks some typed queries once and keeps the next pages' paths. */
async function learnCursors(
  url: string,
  headers: Record<string, string>,
  base: string,
  typedWord: () => string,
  cursors: string[],
): Promise<void> {
  for (let i = 0; i < 200 && cursors.length < 100; i++) {
    const q = encodeURIComponent(typedWord());
    const answer = await fetch(`${url}${base}?q=${q}&limit=50`, { headers });
    if (!answer.ok) throw new Error(`search answered ${answer.status}: ${await answer.text()}`);
    const { nextCursor } = (await answer.json()) as { nextCursor: string | null };
    if (nextCursor) cursors.push(`${base}?q=${q}&limit=50&cursor=${nextCursor}`);
  }
}

/** The device, then its messages: received ones over CHATS chats, in time order, eight words each. */
function* searchEvents(key: string, words: readonly string[]): Generator<LogEvent> {
  yield {
    streamId: deviceStream(DEVICE),
    type: 'DeviceCreated',
    data: { deviceId: DEVICE, name: DEVICE, engine: 'sandbox', metadata: {}, keyHash: hashKey(key) },
  };
  const random = mulberry32(1);
  const zipf = zipfSampler(VOCABULARY, random);
  for (let k = 0; k < MESSAGES; k++) {
    const chatId = chatOf(k % CHATS);
    const text: string[] = [];
    for (let w = 0; w < WORDS_PER_MESSAGE; w++) text.push(words[zipf()]);
    yield {
      streamId: inboxStream(DEVICE),
      type: 'MessageReceived',
      data: {
        deviceId: DEVICE,
        from: chatId,
        chatId,
        isGroup: false,
        type: 'text',
        body: text.join(' '),
        timestamp: T0 + Math.floor(k / 20),
        waMessageId: `SR${k.toString(16).toUpperCase().padStart(10, '0')}`,
      },
    };
  }
}

const chatOf = (n: number) => `49301${String(n).padStart(7, '0')}`;

/** VOCABULARY distinct pronounceable words of 2 to 4 syllables, the same every run. */
function vocabulary(): string[] {
  const consonants = 'bcdfghklmnprstvz';
  const vowels = 'aeiou';
  const random = mulberry32(3);
  const words = new Set<string>();
  while (words.size < VOCABULARY) {
    let word = '';
    const syllables = 2 + Math.floor(random() * 3);
    for (let s = 0; s < syllables; s++)
      word += consonants[Math.floor(random() * consonants.length)] + vowels[Math.floor(random() * vowels.length)];
    words.add(word);
  }
  return [...words];
}
