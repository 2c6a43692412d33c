/**
 * The Baileys engine through a fake socket (support/fake-socket-engine.ts). Sending: the Baileys payload
 * of each kind of content, revokes, and send failures.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { BaileysEngineOptions } from '../../../src/engines/baileys/baileys-engine.js';
import type { EngineConnection, MediaFile } from '../../../src/engines/engine.js';
import { boom } from './support/fake-socket.js';
import { PEER, PEER_JID, useFakeSocketEngine } from './support/fake-socket-engine.js';

const h = useFakeSocketEngine();

describe('Baileys engine (fake socket): sending each kind of content', () => {
  let media: (name: string, mimetype: string) => MediaFile;

  beforeEach(() => {
    media = (name, mimetype) => {
      const path = join(h.dir, name);
      writeFileSync(path, 'media bytes');
      return { path, mimetype, size: 11, filename: name };
    };
  });

  async function sendOne(
    content: Parameters<EngineConnection['send']>[0]['content'],
    options: Partial<BaileysEngineOptions> = {},
  ) {
    if (Object.keys(options).length > 0) h.engine = h.makeEngine(options);
    const { connection, socket } = await h.online();
    socket.whatsAppUsers.set(PEER, true);
    await connection.send({ waMessageId: '3EB0C0FFEE', to: PEER, content });
    expect(socket.sent).toHaveLength(1);
    const [sent] = socket.sent;
    expect(sent.jid).toBe(PEER_JID);
    expect(sent.options).toEqual({ messageId: '3EB0C0FFEE' });
    return sent.content;
  }

  it('text, never with a preview Baileys would fetch itself', async () => {
    expect(await sendOne({ kind: 'text', text: 'see https://example.com' })).toEqual({
      text: 'see https://example.com',
      linkPreview: null,
    });
  });

  it('image and video from the media file, with caption', async () => {
    const image = media('a.jpg', 'image/jpeg');
    expect(await sendOne({ kind: 'image', media: image, caption: 'cat' })).toEqual({
      image: { url: image.path },
      mimetype: 'image/jpeg',
      caption: 'cat',
    });
  });

  it('video without caption', async () => {
    const video = media('a.mp4', 'video/mp4');
    expect(await sendOne({ kind: 'video', media: video })).toEqual({
      video: { url: video.path },
      mimetype: 'video/mp4',
    });
  });

  it('audio as a voice note', async () => {
    const audio = media('a.ogg', 'audio/ogg; codecs=opus');
    expect(await sendOne({ kind: 'audio', media: audio, ptt: true })).toEqual({
      audio: { url: audio.path },
      mimetype: 'audio/ogg; codecs=opus',
      ptt: true,
    });
  });

  it('file as a document with its name and caption', async () => {
    const file = media('invoice.pdf', 'application/pdf');
    expect(await sendOne({ kind: 'file', media: file, caption: 'May' })).toEqual({
      document: { url: file.path },
      mimetype: 'application/pdf',
      fileName: 'invoice.pdf',
      caption: 'May',
    });
  });

  it('location', async () => {
    expect(
      await sendOne({ kind: 'location', latitude: 52.52, longitude: 13.405, name: 'Berlin', address: 'Mitte' }),
    ).toEqual({
      location: { degreesLatitude: 52.52, degreesLongitude: 13.405, name: 'Berlin', address: 'Mitte' },
    });
  });

  it('link: the url appended to the text, no preview without a preview hook', async () => {
    expect(await sendOne({ kind: 'link', url: 'https://example.com/a', text: 'Read this' })).toEqual({
      text: 'Read this https://example.com/a',
      linkPreview: null,
    });
  });

  it('link with the preview from the hook', async () => {
    const thumbnail = Buffer.from('jpeg');
    const content = await sendOne(
      { kind: 'link', url: 'https://example.com/a', text: 'https://example.com/a is good' },
      { linkPreview: async (url) => ({ title: `Title of ${url}`, description: 'desc', jpegThumbnail: thumbnail }) },
    );
    expect(content).toEqual({
      text: 'https://example.com/a is good',
      linkPreview: {
        'canonical-url': 'https://example.com/a',
        'matched-text': 'https://example.com/a',
        title: 'Title of https://example.com/a',
        description: 'desc',
        jpegThumbnail: thumbnail,
      },
    });
  });

  it('link with preview: false does not ask the hook', async () => {
    let asked = false;
    const content = await sendOne(
      { kind: 'link', url: 'https://example.com/a', text: '', preview: false },
      { linkPreview: async () => ((asked = true), null) },
    );
    expect(content).toEqual({ text: 'https://example.com/a', linkPreview: null });
    expect(asked).toBe(false);
  });

  it('reaction to a received message, and to one we sent', async () => {
    expect(await sendOne({ kind: 'reaction', messageId: 'THEIRS', emoji: '👍' })).toEqual({
      react: { key: { remoteJid: PEER_JID, fromMe: false, id: 'THEIRS' }, text: '👍' },
    });
  });

  it('reaction: fromMe from the content, else from what this connection sent', async () => {
    const { connection, socket } = await h.online();
    socket.whatsAppUsers.set(PEER, true);
    await connection.send({ waMessageId: 'MINE', to: PEER, content: { kind: 'text', text: 'hello' } });
    await connection.send({
      waMessageId: 'R1',
      to: PEER,
      content: { kind: 'reaction', messageId: 'MINE', emoji: '❤️' },
    });
    await connection.send({
      waMessageId: 'R2',
      to: PEER,
      content: { kind: 'reaction', messageId: 'EARLIER', emoji: '', fromMe: true },
    });
    expect(socket.sent.slice(1).map((s) => s.content)).toEqual([
      { react: { key: { remoteJid: PEER_JID, fromMe: true, id: 'MINE' }, text: '❤️' } },
      { react: { key: { remoteJid: PEER_JID, fromMe: true, id: 'EARLIER' }, text: '' } },
    ]);
  });

  it('revoke deletes the message for everyone', async () => {
    const { connection, socket } = await h.online();
    await connection.revoke('3EB0DEAD', PEER);
    // Under an id of its own, known to the connection, so that Baileys' echo of it is not reported.
    expect(socket.sent).toEqual([
      {
        jid: PEER_JID,
        content: { delete: { remoteJid: PEER_JID, fromMe: true, id: '3EB0DEAD' } },
        options: { messageId: expect.stringMatching(/^3EB0/) },
      },
    ]);
  });

  it('a media file that cannot be read fails permanently with media_unavailable', async () => {
    const { connection, socket } = await h.online();
    socket.whatsAppUsers.set(PEER, true);
    const missing = { path: join(h.dir, 'gone.jpg'), mimetype: 'image/jpeg', size: 1 };
    await expect(
      connection.send({ waMessageId: 'M', to: PEER, content: { kind: 'image', media: missing } }),
    ).rejects.toMatchObject({
      code: 'media_unavailable',
      permanent: true,
    });
    expect(socket.sent).toEqual([]);
  });

  it('a failure inside Baileys is a transient EngineError', async () => {
    const { connection, socket } = await h.online();
    socket.whatsAppUsers.set(PEER, true);
    socket.sendFailure = boom(500, 'All encryptions failed');
    await expect(
      connection.send({ waMessageId: 'M', to: PEER, content: { kind: 'text', text: 'x' } }),
    ).rejects.toMatchObject({
      name: 'EngineError',
      code: 'engine_error',
      permanent: false,
      message: expect.stringContaining('All encryptions failed'),
    });
  });
});
