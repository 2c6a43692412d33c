/**
 * Reads the JSON body of a media send without holding the media in memory: the `base64` property (top-level,
 * or at a path such as `media.base64`) is decoded as it streams in and written to a file; the other fields are
 * kept, bounded, and parsed by JSON.parse with a placeholder for that string. A hand-written scanner (it only
 * finds where the string starts and ends; JSON.parse still checks the rest), since stream-json is not meant for
 * untrusted input and @streamparser/json emits a string only once whole. Every byte read is counted.
 */
import { type Hash, createHash } from 'node:crypto';
import { type FileHandle, open } from 'node:fs/promises';
import { isMimetype } from '../../media/media-type.js';
import { Problem, invalidRequest, malformedJson } from '../problem.js';

export interface SpooledBase64 {
  /** The decoded media, on disk. */
  path: string;
  size: number;
  /**
   * base64url SHA-256 of the base64 text as sent (the Idempotency-Key fingerprint uses it, as before); ''
   * when the reader was told no route needs it: hashing all that text is CPU a media send should not pay for
   * nothing (docs/notes/performance.md).
   */
  textDigest: string;
  /** The type named by a `data:<type>;base64,` prefix. */
  declaredType?: string;
}

export interface JsonMediaBodyLimits {
  /** Largest media, in decoded bytes. */
  media: number;
  /** Everything but the base64 text, in bytes. */
  fields: number;
  /** The whole body as decoded (after Content-Encoding), in bytes. */
  total: number;
}

export interface JsonMediaBody {
  body: unknown;
  spooled?: SpooledBase64;
}

/** The keys from the top object to the base64 string. */
export type Base64Path = readonly [string, ...string[]];
const TOP_LEVEL: Base64Path = ['base64'];

/** What the base64 text is replaced with in the fields, so that JSON.parse sees a string there. */
const PLACEHOLDER = '"\\u0000spooled-base64"';
const PLACEHOLDER_VALUE = '\u0000spooled-base64';
const DATA_URL = /^data:([^;,]+)?(?:;[^;,=]+=[^;,]*)*;base64,$/i;
/** A data URL's prefix must end (with its comma) within this many characters. */
const MAX_PREFIX = 512;
/** Base64 decoded at most this many characters at a time (the size limit is checked in between). */
const DECODE_SLICE_CHARS = 256 * 1024;
/** Characters from escapes and short runs between them, taken together (see Base64Sink.gather). */
const GATHERED_CHARS = 4096;
/** Decoded media is written to the file in batches of about this many bytes (two or three system calls per MiB). */
const WRITE_BATCH_BYTES = 512 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const pointerOf = (path: Base64Path) => `/${path.join('/')}`;
const notBase64 = (path: Base64Path) =>
  invalidRequest(`body${pointerOf(path)} is not base64`, [{ path: pointerOf(path), message: 'is not base64' }]);
const notAMediaType = (path: Base64Path) =>
  invalidRequest(`body${pointerOf(path)} is a data URL whose type is not a media type`, [
    { path: pointerOf(path), message: 'has a data URL type that is not a media type' },
  ]);
const givenTwice = (path: Base64Path) =>
  invalidRequest(`body${pointerOf(path)} is given more than once`, [
    { path: pointerOf(path), message: 'is given more than once' },
  ]);

/**
 * Reads `source` (the decoded body) to its end; the media, if any, goes to `spoolPath` (created 0600).
 * Throws a Problem on anything refused. `onSpoolBegin` is called before `spoolPath` is created: from then on
 * the caller removes it whatever happens (a body without media creates no file, and costs no removal).
 */
export async function readJsonMediaBody(
  source: AsyncIterable<Buffer>,
  limits: JsonMediaBodyLimits,
  spoolPath: string,
  tooLarge: () => Error,
  path: Base64Path = TOP_LEVEL,
  options: { textDigest?: boolean; onSpoolBegin?: () => void } = {},
): Promise<JsonMediaBody> {
  const scanner = new Scanner(limits, tooLarge, path, options.textDigest !== false);
  let file: FileHandle | undefined;
  let batch: Buffer[] = [];
  let batchBytes = 0;
  const write = async () => {
    if (!file) {
      options.onSpoolBegin?.();
      file = await open(spoolPath, 'w', 0o600);
    }
    const pieces = batch;
    const length = batchBytes;
    batch = [];
    batchBytes = 0;
    // The pieces as they are (not copied into one buffer first); a short write (a disk filling up) is
    // continued, and the next write then fails with the disk's error.
    const { bytesWritten } = await file.writev(pieces);
    if (bytesWritten === length) return;
    const rest = Buffer.concat(pieces, length);
    for (let at = bytesWritten; at < rest.length;) at += (await file.write(rest, at)).bytesWritten;
  };
  let total = 0;
  try {
    for await (const chunk of source) {
      total += chunk.length;
      if (total > limits.total) throw tooLarge();
      for (const bytes of scanner.feed(chunk)) {
        batch.push(bytes);
        batchBytes += bytes.length;
      }
      if (batchBytes >= WRITE_BATCH_BYTES) await write();
    }
    batch.push(...scanner.end());
    if (batch.length > 0) await write();
  } finally {
    await file?.close();
  }
  let body: unknown;
  try {
    body = JSON.parse(scanner.fieldsText());
  } catch {
    throw malformedJson();
  }
  const media = scanner.media();
  if (!media) return { body };
  // The object holding the string (JSON.parse keeps the last of repeated keys: a repeat replaced the placeholder).
  const holder = path
    .slice(0, -1)
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], body) as Record<
    string,
    unknown
  >;
  const key = path[path.length - 1];
  if (holder?.[key] !== PLACEHOLDER_VALUE) throw givenTwice(path);
  delete holder[key];
  if (media.size === 0)
    throw invalidRequest(`body${pointerOf(path)} is empty`, [{ path: pointerOf(path), message: 'is empty' }]);
  return { body, spooled: { path: spoolPath, ...media } };
}

/**
 * An open object or array. `onPath`: reached from the top object by the keys of the path so far, so its
 * keys are compared with the path's next one.
 */
interface Container {
  object: boolean;
  onPath: boolean;
  /** In an object, the next string is a key. */
  expectKey: boolean;
}

/** Byte by byte: copies the fields, and hands the characters of the base64 string at the path to a Base64Sink. */
class Scanner {
  private readonly fields: Buffer[] = [];
  private fieldBytes = 0;
  private readonly open: Container[] = [];
  private inString = false;
  private escaped = false;
  /** The longest key worth capturing: one longer than any key of the path (so a longer key never matches). */
  private readonly keyMax: number;
  private capturingKey = false;
  private key = '';
  private keyJustEnded = false;
  /** The key whose value comes next, when its container is on the path; else undefined. */
  private valueKey: string | undefined;
  private sink: Base64Sink | undefined;
  private seenBase64 = false;
  /** \uXXXX inside the base64 string: the hex digits read so far. */
  private unicode: string | undefined;
  private output: Buffer[] = [];

  constructor(
    private readonly limits: JsonMediaBodyLimits,
    private readonly tooLarge: () => Error,
    private readonly path: Base64Path,
    private readonly textDigest: boolean,
  ) {
    this.keyMax = Math.max(...path.map((key) => key.length)) + 1;
  }

  /** The innermost open container. */
  private get current(): Container | undefined {
    return this.open[this.open.length - 1];
  }

  feed(chunk: Buffer): Buffer[] {
    this.output = [];
    let copyFrom = 0;
    // Where the next quote and backslash of the chunk are (found natively, once each: a run of escapes
    // must not rescan the chunk); -1 when there is none after the last search.
    let quoteAt = -2;
    let backslashAt = -2;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (this.sink) {
        // The run of characters up to the next quote or backslash goes to the sink at once (a control
        // byte in it is the sink's to refuse); quotes and escapes are taken one by one.
        if (!this.escaped && this.unicode === undefined) {
          if (quoteAt !== -1 && quoteAt < i) quoteAt = chunk.indexOf(QUOTE, i);
          if (backslashAt !== -1 && backslashAt < i) backslashAt = chunk.indexOf(BACKSLASH, i);
          const end = Math.min(
            quoteAt === -1 ? chunk.length : quoteAt,
            backslashAt === -1 ? chunk.length : backslashAt,
          );
          if (end > i) {
            this.sink.bytes(chunk.subarray(i, end), this.output);
            i = end - 1;
            continue;
          }
        }
        if (this.base64ByteInOrder(byte)) {
          // The string ended: the placeholder stands for it, and copying resumes at its closing quote.
          this.keep(Buffer.from(PLACEHOLDER.slice(0, -1)));
          copyFrom = i;
        }
        continue;
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (byte === BACKSLASH) this.escaped = true;
        else if (byte === QUOTE) {
          this.inString = false;
          if (this.capturingKey) {
            this.capturingKey = false;
            this.keyJustEnded = true;
          }
          continue;
        }
        // An escaped key never equals a key of the path here: it is then an ordinary (bounded) field.
        if (this.capturingKey && this.key.length < this.keyMax) this.key += String.fromCharCode(byte);
        continue;
      }
      if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
      const valueKey = this.valueKey;
      this.valueKey = undefined;
      const current = this.current;
      // Depth of the value about to start, counted from the top object (1) as the path's index + 1.
      const depth = this.open.length;
      if (byte === QUOTE) {
        this.inString = true;
        if (current?.object && current.expectKey) {
          current.expectKey = false;
          if (current.onPath) {
            this.capturingKey = true;
            this.key = '';
          }
        } else if (valueKey !== undefined && depth === this.path.length && valueKey === this.path[depth - 1]) {
          // The value at the path: from here on its characters go to the sink, not into the fields.
          if (this.seenBase64) throw givenTwice(this.path);
          this.seenBase64 = true;
          this.keep(chunk.subarray(copyFrom, i));
          this.inString = false;
          this.sink = new Base64Sink(this.limits.media, this.tooLarge, this.path, this.textDigest);
          copyFrom = chunk.length; // nothing more of this chunk is copied until the string ends
        }
        this.keyJustEnded = false;
        continue;
      }
      if (byte === 0x3a /* : */ && this.keyJustEnded && current?.onPath) {
        this.valueKey = this.key;
      } else if (byte === 0x7b /* { */ || byte === 0x5b /* [ */) {
        const object = byte === 0x7b;
        // The top object is on the path; below it, an object that is the value of the path's next key.
        const onPath =
          object &&
          (depth === 0 || (valueKey !== undefined && depth < this.path.length && valueKey === this.path[depth - 1]));
        this.open.push({ object, onPath, expectKey: object });
      } else if (byte === 0x7d /* } */ || byte === 0x5d /* ] */) {
        this.open.pop();
      } else if (byte === 0x2c /* , */ && current?.object) {
        current.expectKey = true;
      }
      this.keyJustEnded = false;
    }
    if (!this.sink && copyFrom < chunk.length) this.keep(chunk.subarray(copyFrom));
    return this.output;
  }

  end(): Buffer[] {
    this.output = [];
    // An unterminated base64 string is malformed JSON; JSON.parse of the fields will say so.
    if (this.sink) throw malformedJson();
    return this.output;
  }

  fieldsText(): string {
    return Buffer.concat(this.fields).toString('utf8');
  }

  media(): Omit<SpooledBase64, 'path'> | undefined {
    return this.finished;
  }

  private finished: Omit<SpooledBase64, 'path'> | undefined;

  /** base64Byte, whose refusal comes after any the characters gathered before it hold. */
  private base64ByteInOrder(byte: number): boolean {
    try {
      return this.base64Byte(byte);
    } catch (error) {
      this.sink?.flushGathered(this.output);
      throw error;
    }
  }

  /** One byte of the base64 string; true when it was the closing quote. */
  private base64Byte(byte: number): boolean {
    const sink = this.sink!;
    if (this.unicode !== undefined) {
      if (!/[0-9A-Fa-f]/.test(String.fromCharCode(byte))) throw malformedJson();
      this.unicode += String.fromCharCode(byte);
      if (this.unicode.length === 4) {
        sink.char(String.fromCharCode(parseInt(this.unicode, 16)), this.output);
        this.unicode = undefined;
      }
      return false;
    }
    if (this.escaped) {
      this.escaped = false;
      switch (byte) {
        case 0x75: // u
          this.unicode = '';
          return false;
        case 0x2f: // \/ (some encoders escape every slash)
          sink.char('/', this.output);
          return false;
        case 0x6e: // n
          sink.char('\n', this.output);
          return false;
        case 0x72: // r
          sink.char('\r', this.output);
          return false;
        case 0x74: // t
          sink.char('\t', this.output);
          return false;
        case QUOTE:
        case BACKSLASH:
        case 0x62: // b
        case 0x66: // f
          throw notBase64(this.path);
        default:
          throw malformedJson();
      }
    }
    if (byte === BACKSLASH) {
      this.escaped = true;
      return false;
    }
    if (byte === QUOTE) {
      this.finished = sink.end(this.output);
      this.sink = undefined;
      return true;
    }
    if (byte < 0x20) throw malformedJson();
    sink.char(String.fromCharCode(byte), this.output);
    return false;
  }

  private keep(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.fieldBytes += bytes.length;
    if (this.fieldBytes > this.limits.fields) {
      throw new Problem(
        413,
        'payload_too_large',
        `the fields of the request besides base64 exceed ${this.limits.fields} bytes`,
      );
    }
    this.fields.push(Buffer.from(bytes));
  }
}

/** Whether a raw run is alphabet and spaces only (a raw tab or newline is malformed JSON: not gathered). */
function gatherable(span: Buffer): boolean {
  for (let i = 0; i < span.length; i++) {
    const byte = span[i];
    if (CLASS[byte] !== 1 && byte !== 0x20) return false;
  }
  return true;
}

/** Byte classes of base64 text: 1 an alphabet character, 2 whitespace, 3 padding, 0 anything else. */
const CLASS = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') CLASS[c.charCodeAt(0)] = 1;
for (const c of ' \t\n\r\v\f') CLASS[c.charCodeAt(0)] = 2;
CLASS[0x3d] = 3;

/**
 * The characters of a base64 text (optionally a data URL), decoded as they come. Accepts what the
 * in-memory decoder accepted: whitespace anywhere, at most two `=` at the end, and not one character
 * too many for whole bytes (a length of 1 mod 4).
 *
 * Plain base64 (the usual case) never goes through a loop in JS: a run is decoded natively in whole
 * quanta of 4 characters, and it was plain exactly when every quantum gave 3 bytes (see plain()).
 * Otherwise (whitespace, padding, a bad character) the run is taken again character by character.
 */
class Base64Sink {
  private readonly hash: Hash | undefined;
  private prefix: string | undefined = '';
  private declaredType: string | undefined;
  /** The last 0-3 clean characters, not decoded yet (a quantum is decoded once it is whole). */
  private carry = '';
  private payloadLength = 0;
  private padding = 0;
  private size = 0;
  private readonly gathered = Buffer.alloc(GATHERED_CHARS);
  private gatheredLength = 0;

  constructor(
    private readonly limit: number,
    private readonly tooLarge: () => Error,
    private readonly path: Base64Path,
    textDigest: boolean,
  ) {
    this.hash = textDigest ? createHash('sha256') : undefined;
  }

  /** One character that came from an escape (\/, \n, \uXXXX…). */
  char(c: string, output: Buffer[]): void {
    const code = c.charCodeAt(0);
    // Anything beyond Latin-1 is not base64, nor part of a data URL prefix worth keeping.
    if (code > 0x7f) {
      this.flushGathered(output);
      if (this.prefix === undefined) throw notBase64(this.path);
      this.hash?.update(c, 'utf8');
      this.prefix += c;
      return;
    }
    if (CLASS[code] === 1 || CLASS[code] === 2) this.gather(code, output);
    else {
      this.flushGathered(output);
      this.take(Buffer.from([code]), false, output);
    }
  }

  /** A run of characters as they came in the body (a control byte there is malformed JSON). */
  bytes(span: Buffer, output: Buffer[]): void {
    // A short run of the alphabet (and spaces) after an escape, every `/` escaped by PHP's json_encode say,
    // joins the gathered characters; anything else (plain text in small chunks too) is taken as it comes.
    if (this.gatheredLength > 0 && span.length < GATHERED_CHARS && gatherable(span)) {
      for (let i = 0; i < span.length; i++) this.gather(span[i], output);
      return;
    }
    this.flushGathered(output);
    this.take(span, true, output);
  }

  /**
   * Escaped characters of the alphabet or whitespace, and short runs of the alphabet between them, are taken
   * GATHERED_CHARS at a time: taken one by one, a body of escapes cost a hundred times a plain one (a hash
   * update and a decode step per character). They can refuse nothing by themselves but a character after
   * padding, and every other character, the end, and any refusal of the scanner take them first: refusals
   * still come in the order of the text.
   */
  private gather(code: number, output: Buffer[]): void {
    this.gathered[this.gatheredLength++] = code;
    if (this.gatheredLength === GATHERED_CHARS) this.flushGathered(output);
  }

  flushGathered(output: Buffer[]): void {
    if (this.gatheredLength === 0) return;
    // A copy: what take() keeps of a span must not change under it when the buffer is filled again.
    const run = Buffer.from(this.gathered.subarray(0, this.gatheredLength));
    this.gatheredLength = 0;
    this.take(run, false, output);
  }

  private take(span: Buffer, raw: boolean, output: Buffer[]): void {
    this.hash?.update(span);
    let rest = span;
    if (this.prefix !== undefined) {
      // The first characters are held back until it is clear whether they start a data URL.
      let i = 0;
      while (i < rest.length && this.prefix !== undefined) {
        if (raw && rest[i] < 0x20) throw malformedJson();
        this.prefix += String.fromCharCode(rest[i]);
        i++;
        if (!'data:'.startsWith(this.prefix.slice(0, 5).toLowerCase())) {
          const held = Buffer.from(this.prefix, 'latin1');
          this.prefix = undefined;
          rest = Buffer.concat([held, rest.subarray(i)]);
          i = 0;
          break;
        }
        if (this.prefix.endsWith(',')) {
          const match = DATA_URL.exec(this.prefix);
          if (!match) throw notBase64(this.path);
          this.declaredType = match[1]?.toLowerCase();
          // It stands in for `mimetype`, so it is held to the same rule (no line breaks into a header, say).
          if (this.declaredType !== undefined && !isMimetype(this.declaredType)) throw notAMediaType(this.path);
          this.prefix = undefined;
        } else if (this.prefix.length > MAX_PREFIX) throw notBase64(this.path);
      }
      rest = rest.subarray(i);
    }
    // In slices, so that what is decoded before the size limit is checked stays bounded whatever the chunk size.
    for (let at = 0; at < rest.length; at += DECODE_SLICE_CHARS) {
      const slice = rest.subarray(at, at + DECODE_SLICE_CHARS);
      if (!this.plain(slice, output)) this.payload(slice, raw, output);
    }
  }

  /** Decodes the slice at once when it is plain base64 (alphabet only); false, with nothing done, otherwise. */
  private plain(slice: Buffer, output: Buffer[]): boolean {
    if (this.padding > 0) return false;
    // The characters that complete the quantum begun by the carry, then whole quanta, then the 0-3 left over:
    // each decoded from its own string (never one string of carry + slice, which V8 copies again to flatten).
    if (this.carry.length + slice.length < 4) {
      for (let i = 0; i < slice.length; i++) if (CLASS[slice[i]] !== 1) return false;
      this.carry += slice.toString('latin1');
      this.payloadLength += slice.length;
      return true;
    }
    const head = this.carry.length > 0 ? 4 - this.carry.length : 0;
    for (let i = 0; i < head; i++) if (CLASS[slice[i]] !== 1) return false;
    const whole = slice.length - head - ((slice.length - head) % 4);
    for (let i = head + whole; i < slice.length; i++) if (CLASS[slice[i]] !== 1) return false;
    let bytes: Buffer | undefined;
    if (whole > 0) {
      // Node's decoder skips every byte outside its alphabet (the base64 and base64url ones; a padding `=`
      // ends the text): all whole quanta came out exactly when the text had none, or `-` or `_` in it.
      bytes = Buffer.from(slice.toString('latin1', head, head + whole), 'base64');
      if (bytes.length !== (whole / 4) * 3 || slice.includes(0x2d) || slice.includes(0x5f)) return false;
    }
    if (head > 0) this.emit(Buffer.from(this.carry + slice.toString('latin1', 0, head), 'base64'), output);
    if (bytes) this.emit(bytes, output);
    this.carry = slice.toString('latin1', head + whole);
    this.payloadLength += slice.length;
    return true;
  }

  /** Character by character: refuses what is not base64, drops whitespace, counts the padding. */
  private payload(span: Buffer, raw: boolean, output: Buffer[]): void {
    const clean = Buffer.allocUnsafe(span.length);
    let n = 0;
    for (let i = 0; i < span.length; i++) {
      const byte = span[i];
      if (raw && byte < 0x20) throw malformedJson();
      const kind = CLASS[byte];
      if (kind === 1) {
        if (this.padding > 0) throw notBase64(this.path);
      } else if (kind === 3) {
        if (++this.padding > 2) throw notBase64(this.path);
      } else if (kind === 2) continue;
      else throw notBase64(this.path);
      clean[n++] = byte;
    }
    if (n === 0) return;
    this.payloadLength += n;
    const text = this.carry + clean.toString('latin1', 0, n);
    const whole = text.length - (text.length % 4);
    if (whole > 0) this.emit(Buffer.from(text.slice(0, whole), 'base64'), output);
    this.carry = text.slice(whole);
  }

  private emit(bytes: Buffer, output: Buffer[]): void {
    if (bytes.length === 0) return;
    this.size += bytes.length;
    if (this.size > this.limit) throw this.tooLarge();
    output.push(bytes);
  }

  end(output: Buffer[]): Omit<SpooledBase64, 'path'> {
    this.flushGathered(output);
    // A prefix that never became a data URL ("dat" alone) is payload; a data URL cut short is not base64.
    if (this.prefix !== undefined) {
      if (this.prefix.toLowerCase().startsWith('data:')) throw notBase64(this.path);
      const held = Buffer.from(this.prefix, 'latin1');
      this.prefix = undefined;
      if (held.length > 0) this.payload(held, false, output);
    }
    if (this.payloadLength % 4 === 1) throw notBase64(this.path);
    if (this.carry.length > 0) this.emit(Buffer.from(this.carry, 'base64'), output);
    this.carry = '';
    return {
      size: this.size,
      textDigest: this.hash?.digest('base64url') ?? '',
      ...(this.declaredType ? { declaredType: this.declaredType } : {}),
    };
  }
}
