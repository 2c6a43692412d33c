/** The text of a link message: the URL is appended when the text does not contain it (every engine sends it so). */
export function textWithUrl(text: string, url: string): string {
  if (text.includes(url)) return text;
  return text.trim() === '' ? url : `${text} ${url}`;
}
