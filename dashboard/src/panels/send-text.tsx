import { useState } from 'preact/hooks';
import { describeError } from '../api/client.js';
import type { DetailProps } from './detail-props.js';

export function SendText({ api, device, notify, bump }: DetailProps) {
  const [to, setTo] = useState('');
  const [text, setText] = useState('Hello from the dashboard');
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      const answer = await api.sendText(device.id, { to: to.replace(/\D/g, ''), text });
      notify(`Queued ${answer.waMessageId} (${answer.status}).`);
      bump();
    } catch (err) {
      notify(describeError(err), 'error');
    }
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="send-title">
      <h3 id="send-title">Send a test message</h3>
      <label for="send-to">To (phone number, digits)</label>
      <input
        id="send-to"
        inputMode="tel"
        required
        value={to}
        onInput={(e) => setTo(e.currentTarget.value)}
        placeholder="4915112345678"
      />
      <label for="send-text">Text</label>
      <textarea id="send-text" required rows={2} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <button type="submit">Send text</button>
    </form>
  );
}
