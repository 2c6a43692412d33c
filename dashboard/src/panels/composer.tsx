import { useState } from 'preact/hooks';
import { describeError } from '../api/client.js';
import { base64Of } from '../api/files.js';
import type { MessageView } from '../api/types.js';
import type { DetailProps } from './detail-props.js';

/** Writes into a chat: a text, or a picked file (a picture as an image, anything else as a file), maybe as a reply. */
export function Composer({
  api,
  device,
  notify,
  bump,
  chatId,
  replyTo,
  onSent,
}: Pick<DetailProps, 'api' | 'device' | 'notify' | 'bump'> & {
  chatId: string;
  replyTo: MessageView | null;
  onSent: () => void;
}) {
  const [text, setText] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const context = replyTo ? { replyTo: replyTo.waMessageId } : {};
      const caption = text.trim() === '' ? {} : { caption: text };
      let queued;
      if (file) {
        const media = { to: chatId, base64: await base64Of(file), mimetype: file.type || 'application/octet-stream' };
        queued = file.type.startsWith('image/')
          ? await api.sendImage(device.id, { ...media, ...caption, ...context })
          : await api.sendFile(device.id, { ...media, filename: file.name, ...caption, ...context });
      } else queued = await api.sendText(device.id, { to: chatId, text, ...context });
      notify(`Queued ${queued.waMessageId}.`);
      setText('');
      setFile(null);
      (event.target as HTMLFormElement).reset();
      onSent();
      bump();
    } catch (err) {
      notify(describeError(err), 'error');
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="composer" onSubmit={submit} aria-label="Write to this chat">
      {replyTo && <p class="hint">Replying to: {replyTo.body || replyTo.type}</p>}
      <label for="composer-text">{file ? 'Caption (optional)' : 'Message'}</label>
      <textarea
        id="composer-text"
        rows={2}
        required={!file}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
      />
      <label for="composer-file">Attach a file (optional)</label>
      <input id="composer-file" type="file" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
      <button type="submit" disabled={busy}>
        Send
      </button>
    </form>
  );
}
