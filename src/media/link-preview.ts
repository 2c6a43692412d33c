/**
 * Link previews for `link` messages with `preview: true`: the page's Open Graph data (og:title,
 * og:description, og:url, og:image), fetched through the outbound network guard like any URL a user
 * chooses. Only the page's head is read, with a size cap and a short timeout; the og:image becomes the
 * thumbnail when it is a small JPEG (WhatsApp wants JPEG, and no image library is bundled to convert).
 * Any failure answers null: the link is then sent without a preview.
 */
import type { Got } from 'got';
import { fileTypeFromBuffer } from 'file-type';
import type { LinkPreview, LinkPreviewProvider } from '../engines/baileys/outgoing-content.js';
import type { OutboundGuard } from '../net/outbound-guard.js';
import { createOutboundHttp } from '../net/outbound-http.js';

export interface LinkPreviewOptions {
  timeoutMs?: number;
  /** The most of the page read looking for its head. */
  maxPageBytes?: number;
  maxThumbnailBytes?: number;
}

const DEFAULTS = { timeoutMs: 10_000, maxPageBytes: 512 * 1024, maxThumbnailBytes: 256 * 1024 };
const TITLE_MAX = 300;
const DESCRIPTION_MAX = 1_000;

export function createLinkPreviewProvider(guard: OutboundGuard, options: LinkPreviewOptions = {}): LinkPreviewProvider {
  const settings = { ...DEFAULTS, ...options };
  const http = createOutboundHttp(guard, { timeoutMs: settings.timeoutMs }).extend({
    followRedirect: true,
    maxRedirects: 3,
    hooks: { beforeRedirect: [(redirect) => guard.assertAllowed(redirect.url as URL)] },
  });
  return async (url) => {
    try {
      const page = await readCapped(http, url, settings.maxPageBytes, 'text/html,application/xhtml+xml');
      if (!page || !/html/i.test(page.contentType ?? 'text/html')) return null;
      const graph = openGraphOf(page.body.toString('utf8'));
      if (!graph.title) return null;
      const preview: LinkPreview = { title: graph.title.slice(0, TITLE_MAX) };
      if (graph.description) preview.description = graph.description.slice(0, DESCRIPTION_MAX);
      const canonical = absolute(graph.url, page.url);
      if (canonical && canonical !== url) preview.canonicalUrl = canonical;
      const image = absolute(graph.image, page.url);
      const thumbnail = image ? await jpegOf(http, image, settings.maxThumbnailBytes) : undefined;
      if (thumbnail) preview.jpegThumbnail = thumbnail;
      return preview;
    } catch {
      return null;
    }
  };
}

export interface OpenGraph {
  title?: string;
  description?: string;
  url?: string;
  image?: string;
}

/** og:* meta tags of an HTML page, with <title> and the description meta tag as fallbacks. */
export function openGraphOf(html: string): OpenGraph {
  const head = html.split(/<\/head\s*>/i)[0];
  const meta = new Map<string, string>();
  for (const tag of head.match(/<meta\b[^>]*>/gi) ?? []) {
    const attributes = attributesOf(tag);
    const name = (attributes.get('property') ?? attributes.get('name'))?.toLowerCase();
    const content = attributes.get('content');
    if (name && content !== undefined && !meta.has(name)) meta.set(name, decodeEntities(content).trim());
  }
  const title = meta.get('og:title') || decodeEntities(/<title[^>]*>([\s\S]*?)<\/title>/i.exec(head)?.[1] ?? '').trim();
  const graph: OpenGraph = {};
  if (title) graph.title = title.replace(/\s+/g, ' ');
  const description = meta.get('og:description') || meta.get('description');
  if (description) graph.description = description.replace(/\s+/g, ' ');
  const url = meta.get('og:url');
  if (url) graph.url = url;
  const image = meta.get('og:image:secure_url') || meta.get('og:image') || meta.get('og:image:url');
  if (image) graph.image = image;
  return graph;
}

function attributesOf(tag: string): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const match of tag.matchAll(/([a-zA-Z:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g)) {
    attributes.set(match[1].toLowerCase(), match[2] ?? match[3] ?? match[4] ?? '');
  }
  return attributes;
}

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,6});/gi, (whole, entity: string) => {
    if (entity[0] === '#') {
      const code =
        entity[1] === 'x' || entity[1] === 'X' ? Number.parseInt(entity.slice(2), 16) : Number(entity.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[entity.toLowerCase()] ?? whole;
  });
}

function absolute(link: string | undefined, base: string): string | undefined {
  if (!link) return undefined;
  try {
    const url = new URL(link, base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : undefined;
  } catch {
    return undefined;
  }
}

async function jpegOf(http: Got, url: string, maxBytes: number): Promise<Buffer | undefined> {
  const image = await readCapped(http, url, maxBytes, 'image/jpeg,image/*;q=0.8').catch(() => undefined);
  if (!image || image.truncated) return undefined;
  const type = await fileTypeFromBuffer(image.body);
  return type?.mime === 'image/jpeg' ? image.body : undefined;
}

/** GETs at most `maxBytes` of a URL (2xx only); `truncated` when there was more. */
async function readCapped(
  http: Got,
  url: string,
  maxBytes: number,
  accept: string,
): Promise<{ body: Buffer; contentType?: string; url: string; truncated: boolean } | undefined> {
  const stream = http.stream(url, { headers: { accept } });
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  let finalUrl = url;
  let contentType: string | undefined;
  const ok = await new Promise<boolean>((resolve, reject) => {
    stream.once(
      'response',
      (response: { statusCode: number; url: string; headers: Record<string, string | string[] | undefined> }) => {
        finalUrl = response.url || url;
        const type = response.headers['content-type'];
        if (typeof type === 'string') contentType = type;
        if (response.statusCode < 200 || response.statusCode >= 300) {
          stream.destroy();
          resolve(false);
        }
      },
    );
    stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= maxBytes) {
        truncated = true;
        stream.destroy();
        resolve(true);
      }
    });
    stream.once('end', () => resolve(true));
    stream.once('error', (error) => (truncated ? resolve(true) : reject(error)));
  });
  if (!ok) return undefined;
  const body = Buffer.concat(chunks).subarray(0, maxBytes);
  return { body, url: finalUrl, truncated, ...(contentType ? { contentType } : {}) };
}
