import { crc32, inflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/**
 * Checks that `bytes` is a well-formed PNG: signature, every chunk's CRC, an IHDR first and IEND last,
 * and image data that inflates to exactly the rows the header announces. Answers the dimensions.
 */
export function parsePng(bytes: Buffer): { width: number; height: number } {
  if (!bytes.subarray(0, 8).equals(SIGNATURE)) throw new Error('no PNG signature');
  let offset = 8;
  const chunks: Array<{ type: string; data: Buffer }> = [];
  while (offset < bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    const data = bytes.subarray(offset + 8, offset + 8 + length);
    const crc = bytes.readUInt32BE(offset + 8 + length);
    if (crc32(bytes.subarray(offset + 4, offset + 8 + length)) !== crc) throw new Error(`bad CRC in chunk ${type}`);
    chunks.push({ type, data });
    offset += 12 + length;
  }
  if (chunks[0]?.type !== 'IHDR' || chunks[chunks.length - 1]?.type !== 'IEND')
    throw new Error('IHDR must come first and IEND last');
  const header = chunks[0].data;
  const width = header.readUInt32BE(0);
  const height = header.readUInt32BE(4);
  const bitDepth = header[8];
  const channels = CHANNELS[header[9]];
  if (!channels) throw new Error(`unknown colour type ${header[9]}`);
  const pixels = inflateSync(Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)));
  const rowBytes = 1 + Math.ceil((width * channels * bitDepth) / 8);
  if (pixels.length !== rowBytes * height)
    throw new Error(`image data holds ${pixels.length} bytes, the header announces ${rowBytes * height}`);
  return { width, height };
}
