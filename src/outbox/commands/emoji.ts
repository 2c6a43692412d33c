/** One emoji, as a reaction takes it: a single grapheme that is pictographic, a flag or a keycap. */
const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

export function isSingleEmoji(text: string): boolean {
  const graphemes = [...segmenter.segment(text)];
  if (graphemes.length !== 1) return false;
  return /\p{Extended_Pictographic}/u.test(text) || /^\p{Regional_Indicator}{2}$/u.test(text) || /\u20e3/u.test(text);
}
