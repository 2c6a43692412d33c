import { useState } from 'preact/hooks';
import { SCOPES, type Scope } from '../../../src/auth/scopes.js';
import { describeError } from '../api/client.js';
import type { CreatedKey, ScopedKey } from '../api/types.js';
import { useLoaded } from '../hooks/use-loaded.js';
import type { DetailProps } from './detail-props.js';

/** What each scope lets a key do, in the words of /openapi.json: one per scope the server knows. */
const SCOPE_HINTS: Readonly<Record<Scope, string>> = {
  read: 'read: every GET, the live streams, media',
  send: 'send: sends, edits, deletes, the outbox, receipts, presence',
  manage: 'manage: session, webhooks, settings, groups, profile, keys',
};

const when = (at: string | null) => (at === null ? 'never' : new Date(at).toLocaleString());

/** The device's scoped keys (POST/GET/DELETE /devices/:id/keys): a key for each client, with only what it needs. */
export function Keys({ api, device, notify }: DetailProps) {
  const [list, reload, error] = useLoaded(() => api.keys(device.id), [api, device.id]);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['read']);
  // The key itself is in the answer to its creation only: shown until the operator says it is stored.
  const [created, setCreated] = useState<CreatedKey | null>(null);

  const create = async (event: Event) => {
    event.preventDefault();
    try {
      setCreated(await api.createKey(device.id, { name: name.trim(), scopes }));
      setName('');
      reload();
    } catch (err) {
      notify(describeError(err), 'error');
    }
  };
  const remove = async (key: ScopedKey) => {
    try {
      await api.deleteKey(device.id, key.keyId);
      notify(`Key "${key.name}" deleted: it stopped working.`);
      if (created?.keyId === key.keyId) setCreated(null);
    } catch (err) {
      notify(describeError(err), 'error');
    }
    reload();
  };
  const toggle = (scope: Scope, on: boolean) =>
    setScopes((now) => SCOPES.filter((known) => (known === scope ? on : now.includes(known))));

  return (
    <div class="card" aria-labelledby="keys-title">
      <h3 id="keys-title">Keys</h3>
      {error && <p class="error">{error}</p>}
      {list && list.items.length === 0 && <p>Only the key made with the device.</p>}
      {list && list.items.length > 0 && (
        <table data-testid="keys">
          <caption class="sr-only">Scoped keys of the device</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Scopes</th>
              <th scope="col">Made</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((key) => (
              <tr key={key.keyId}>
                <td>{key.name}</td>
                <td>{key.scopes.join(', ')}</td>
                <td>
                  <time dateTime={key.createdAt}>{when(key.createdAt)}</time>
                </td>
                <td>
                  {key.lastUsedAt === null ? 'never' : <time dateTime={key.lastUsedAt}>{when(key.lastUsedAt)}</time>}
                </td>
                <td>
                  <button
                    type="button"
                    class="secondary"
                    onClick={() => void remove(key)}
                    aria-label={`Delete key ${key.name}`}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form onSubmit={create}>
        <label for="key-name">Name of a new key</label>
        <input
          id="key-name"
          required
          maxLength={100}
          value={name}
          placeholder="CRM (read only)"
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <fieldset>
          <legend>Scopes</legend>
          {SCOPES.map((scope) => (
            <label key={scope} class="check">
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(e) => toggle(scope, e.currentTarget.checked)}
              />{' '}
              {SCOPE_HINTS[scope]}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={scopes.length === 0}>
          Make key
        </button>
      </form>
      {created && (
        <div class="once" role="status" data-testid="scoped-key">
          <p>
            Key <strong>{created.name}</strong> ({created.scopes.join(', ')}) made. It is shown only this once; store it
            now:
          </p>
          <code>{created.key}</code>
          <button type="button" class="secondary" onClick={() => void navigator.clipboard?.writeText(created.key)}>
            Copy key
          </button>
          <button type="button" class="link" onClick={() => setCreated(null)}>
            I stored it
          </button>
        </div>
      )}
    </div>
  );
}
