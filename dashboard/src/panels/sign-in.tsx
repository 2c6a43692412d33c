import { useState } from 'preact/hooks';
import { ApiError, describeError, gatewayApi } from '../api/client.js';

/** Asks for the admin key and checks it with one call before keeping it. */
export function SignIn({ onKey }: { onKey: (key: string) => void }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      await gatewayApi(value.trim()).listDevices(1);
      onKey(value.trim());
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'That key is not the admin key.' : describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>Device Messaging Gateway</h1>
      <form onSubmit={submit}>
        <label for="admin-key">Admin key</label>
        <input
          id="admin-key"
          type="password"
          autocomplete="current-password"
          required
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
        />
        <p class="hint">Kept in this tab only (session storage), sent in a header, never in a URL.</p>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
