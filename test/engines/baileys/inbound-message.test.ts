import { type WAMessage, proto } from 'baileys';
import { describe, expect, it } from 'vitest';
import { inboundMessageOf } from '../../../src/engines/baileys/inbound-message.js';

const received = (message: proto.IMessage, extra: Partial<WAMessage> = {}): WAMessage => ({
  key: { remoteJid: '15551234567@s.whatsapp.net', fromMe: false, id: 'ABCDEF0123' },
  messageTimestamp: 1_700_000_000,
  pushName: 'Alice',
  message,
  ...extra,
});

const map = (message: proto.IMessage, extra?: Partial<WAMessage>) =>
  inboundMessageOf(received(message, extra), '15551234567', 1_800_000_000);

describe('inbound WhatsApp message → InboundMessage', () => {
  it('maps a plain text with its sender, id, timestamp and push name', () => {
    expect(map({ conversation: 'hello' })).toEqual({
      waMessageId: 'ABCDEF0123',
      from: '15551234567',
      type: 'text',
      body: 'hello',
      timestamp: 1_700_000_000,
      pushName: 'Alice',
    });
  });

  it('tells links from texts', () => {
    expect(map({ conversation: 'see https://example.com/x' })).toMatchObject({
      type: 'link',
      body: 'see https://example.com/x',
    });
    expect(map({ conversation: 'www.example.org is up' })).toMatchObject({ type: 'link' });
    expect(map({ extendedTextMessage: { text: 'preview', matchedText: 'https://example.com' } })).toMatchObject({
      type: 'link',
      body: 'preview',
    });
    expect(map({ extendedTextMessage: { text: 'a quoted reply' } })).toMatchObject({
      type: 'text',
      body: 'a quoted reply',
    });
  });

  it('maps media with caption, mimetype, size and filename', () => {
    expect(map({ imageMessage: { caption: 'cat', mimetype: 'image/jpeg', fileLength: 2048 } })).toMatchObject({
      type: 'image',
      body: 'cat',
      media: { mimetype: 'image/jpeg', size: 2048 },
    });
    expect(map({ videoMessage: { mimetype: 'video/mp4' } })).toMatchObject({
      type: 'video',
      body: '',
      media: { mimetype: 'video/mp4' },
    });
    expect(map({ audioMessage: { mimetype: 'audio/ogg; codecs=opus', ptt: true, fileLength: 900 } })).toMatchObject({
      type: 'audio',
      body: '',
      media: { mimetype: 'audio/ogg; codecs=opus', size: 900 },
    });
    expect(
      map({
        documentMessage: { mimetype: 'application/pdf', fileName: 'invoice.pdf', caption: 'May', fileLength: 10 },
      }),
    ).toEqual(
      expect.objectContaining({
        type: 'file',
        body: 'May',
        media: { mimetype: 'application/pdf', size: 10, filename: 'invoice.pdf' },
      }),
    );
    expect(map({ stickerMessage: { mimetype: 'image/webp' } })).toMatchObject({
      type: 'sticker',
      body: '',
      media: { mimetype: 'image/webp' },
    });
    expect(map({ imageMessage: {} })).toMatchObject({ media: { mimetype: 'application/octet-stream' } });
  });

  it('unwraps ephemeral, view-once and captioned documents', () => {
    expect(map({ ephemeralMessage: { message: { conversation: 'disappearing' } } })).toMatchObject({
      type: 'text',
      body: 'disappearing',
    });
    expect(
      map({ viewOnceMessageV2: { message: { imageMessage: { caption: 'once', mimetype: 'image/jpeg' } } } }),
    ).toMatchObject({
      type: 'image',
      body: 'once',
    });
    expect(
      map({
        documentWithCaptionMessage: {
          message: { documentMessage: { caption: 'doc', fileName: 'a.txt', mimetype: 'text/plain' } },
        },
      }),
    ).toMatchObject({
      type: 'file',
      body: 'doc',
      media: { filename: 'a.txt' },
    });
  });

  it('maps locations with their coordinates', () => {
    expect(
      map({ locationMessage: { degreesLatitude: 52.52, degreesLongitude: 13.405, name: 'Berlin', address: 'Mitte' } }),
    ).toMatchObject({
      type: 'location',
      body: 'Berlin, Mitte',
      location: { latitude: 52.52, longitude: 13.405, name: 'Berlin', address: 'Mitte' },
    });
    expect(
      map({ liveLocationMessage: { degreesLatitude: 1, degreesLongitude: 2, caption: 'on my way' } }),
    ).toMatchObject({
      type: 'location',
      body: 'on my way',
      location: { latitude: 1, longitude: 2 },
    });
  });

  it('maps reactions, contacts and unknown content', () => {
    expect(map({ reactionMessage: { key: { id: 'X' }, text: '👍' } })).toMatchObject({ type: 'reaction', body: '👍' });
    expect(map({ reactionMessage: { key: { id: 'X' }, text: '' } })).toMatchObject({ type: 'reaction', body: '' });
    expect(map({ contactMessage: { displayName: 'Bob', vcard: 'BEGIN:VCARD' } })).toMatchObject({
      type: 'contact',
      body: 'Bob',
    });
    expect(map({ contactsArrayMessage: { contacts: [{ displayName: 'A' }, { displayName: 'B' }] } })).toMatchObject({
      type: 'contact',
      body: 'A, B',
    });
    expect(map({ pollCreationMessage: { name: 'Lunch?' } })).toMatchObject({
      type: 'poll',
      body: 'Lunch?',
      poll: { question: 'Lunch?', options: [], multipleAnswers: true },
    });
    expect(map({ buttonsResponseMessage: { selectedButtonId: 'x' } })).toMatchObject({ type: 'unknown', body: '' });
  });

  it('skips protocol traffic and content-less placeholders', () => {
    expect(map({ protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE } })).toBeUndefined();
    expect(inboundMessageOf(received({}, { message: null }), '15551234567')).toBeUndefined();
  });

  it('skips an album header: its photos and videos arrive as messages of their own', () => {
    expect(map({ albumMessage: { expectedImageCount: 3, expectedVideoCount: 1 } })).toBeUndefined();
  });

  it('uses the current time when WhatsApp sent no timestamp, and leaves out a missing push name', () => {
    const message = map({ conversation: 'x' }, { messageTimestamp: null, pushName: null });
    expect(message?.timestamp).toBe(1_800_000_000);
    expect(message).not.toHaveProperty('pushName');
  });
});
