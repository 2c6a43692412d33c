import { generateMessageIDV2 } from 'baileys';
import { describe, expect, it } from 'vitest';
import { newWaMessageId, WA_MESSAGE_ID_PATTERN } from '../../src/messages/message-id.js';

describe('waMessageId generation', () => {
  it('has the format of WhatsApp Web ids, the one Baileys generates', () => {
    expect(generateMessageIDV2('4915100000001:3@s.whatsapp.net')).toMatch(WA_MESSAGE_ID_PATTERN);
    expect(newWaMessageId('4915100000001:3@s.whatsapp.net')).toMatch(WA_MESSAGE_ID_PATTERN);
    expect(newWaMessageId()).toMatch(WA_MESSAGE_ID_PATTERN);
  });

  it('never repeats', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newWaMessageId('4915100000001@s.whatsapp.net')));
    expect(ids.size).toBe(10_000);
  });
});
