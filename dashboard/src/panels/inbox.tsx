import { useState } from 'preact/hooks';
import type { ChatFilter, MessageView } from '../api/types.js';
import { useLoaded } from '../hooks/use-loaded.js';
import { usePaged } from '../hooks/use-paged.js';
import { Composer } from './composer.js';
import type { DetailProps } from './detail-props.js';
import { MessageItem } from './message-item.js';

const CHATS = 50;
const MESSAGES = 50;
const FOUND = 20;
const LABEL = 'label:';
/** The chat list's filters, in words. */
const FILTERS: ReadonlyArray<{ value: ChatFilter | ''; label: string }> = [
  { value: '', label: 'All chats' },
  { value: 'unread', label: 'Unread' },
  { value: 'pinned', label: 'Pinned' },
  { value: 'archived', label: 'Archived' },
];

/** The device's conversations (GET /chats) and a chat's messages (GET /chats/:chatId/messages), with a composer. */
export function Inbox(props: DetailProps) {
  const { api, device, version } = props;
  const [chatId, setChatId] = useState<string | null>(null);
  const [replyTo, setReplyTo] = useState<MessageView | null>(null);
  // A yes/no filter, `label:<labelId>`, or '' for all chats.
  const [filter, setFilter] = useState('');
  // The account's labels (WhatsApp Business; none otherwise): filters of their own, and names on the chats.
  const [labels] = useLoaded(() => api.labels(device.id), [api, device.id, version]);
  const chats = usePaged(
    (cursor) =>
      api.chats(
        device.id,
        CHATS,
        filter.startsWith(LABEL)
          ? { label: filter.slice(LABEL.length) }
          : FILTERS.find((f) => f.value === filter)?.value || undefined,
        cursor,
      ),
    [api, device.id, filter],
    [version],
  );
  const [query, setQuery] = useState('');
  // The words searched for; null: no search shown.
  const [searched, setSearched] = useState<string | null>(null);
  const found = usePaged(
    (cursor) =>
      searched
        ? api.searchMessages(device.id, searched, FOUND, cursor)
        : Promise.resolve({ items: [], nextCursor: null }),
    [api, device.id, searched],
    [],
  );
  const messages = usePaged(
    (cursor) =>
      chatId ? api.chatMessages(device.id, chatId, MESSAGES, cursor) : Promise.resolve({ items: [], nextCursor: null }),
    [api, device.id, chatId],
    [version],
  );
  const open = (id: string) => {
    setChatId(id);
    setReplyTo(null);
  };
  const search = (event: Event) => {
    event.preventDefault();
    setSearched(query.trim() || null);
    // The same words again: read them again.
    found.reload();
  };
  return (
    <div class="card inbox" aria-labelledby="inbox-title">
      <h3 id="inbox-title">Inbox</h3>
      <form class="search" role="search" onSubmit={search}>
        <label for="inbox-search">Search messages</label>
        <input
          id="inbox-search"
          type="search"
          maxLength={200}
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
        <button type="submit" class="secondary">
          Search
        </button>
      </form>
      {found.error && <p class="error">{found.error}</p>}
      {searched && found.items && (
        <section aria-label={`Messages with "${searched}"`} data-testid="found">
          <h4>
            Found for “{searched}”{' '}
            <button type="button" class="link" onClick={() => setSearched(null)}>
              Clear
            </button>
          </h4>
          {found.items.length === 0 && <p>No message has these words.</p>}
          {/* Above the list, which shows the newest last: older results come in on top. */}
          {found.more && (
            <button type="button" class="secondary more" onClick={found.more}>
              More results
            </button>
          )}
          <ol class="messages">
            {found.items.map((message) => (
              <li key={message.waMessageId} class={message.fromMe ? 'message mine' : 'message'}>
                <p class="meta">
                  {message.fromMe ? 'You' : `+${message.participant ?? message.from}`} ·{' '}
                  <time>{new Date(message.timestamp * 1000).toLocaleString()}</time>
                </p>
                <p>{message.body || `[${message.type}]`}</p>
                {message.chatId !== 'status@broadcast' && (
                  <button type="button" class="link" onClick={() => open(message.chatId)}>
                    Open the chat
                  </button>
                )}
              </li>
            ))}
          </ol>
        </section>
      )}
      <label for="chat-filter">Show</label>
      <select id="chat-filter" value={filter} onChange={(e) => setFilter(e.currentTarget.value)}>
        {FILTERS.map((f) => (
          <option key={f.value} value={f.value}>
            {f.label}
          </option>
        ))}
        {labels?.items.map((label) => (
          <option key={label.labelId} value={`${LABEL}${label.labelId}`}>
            Label: {label.name}
          </option>
        ))}
      </select>
      {chats.error && <p class="error">{chats.error}</p>}
      {chats.items?.length === 0 && <p>{filter ? 'No such conversations.' : 'No conversations yet.'}</p>}
      {chats.items && chats.items.length > 0 && (
        <ul class="chats" data-testid="chats" tabIndex={0} aria-label="Conversations, latest first">
          {chats.items.map((chat) => (
            <li key={chat.chatId}>
              <button
                type="button"
                aria-pressed={chat.chatId === chatId}
                onClick={() => open(chat.chatId)}
                data-testid={`chat-${chat.chatId}`}
              >
                <span class="name">{chat.name ?? (chat.isGroup ? 'Group' : `+${chat.chatId}`)}</span>{' '}
                {chat.unreadCount > 0 && <span class="badge pending">{chat.unreadCount} unread</span>}
                {chat.labels.map((id) => (
                  <span key={id} class="badge label">
                    {labels?.items.find((label) => label.labelId === id)?.name ?? id}
                  </span>
                ))}
                <span class="last">
                  {chat.lastMessage?.fromMe ? 'You: ' : ''}
                  {chat.lastMessage ? chat.lastMessage.body || chat.lastMessage.type : ''}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {chats.more && (
        <button type="button" class="secondary more" onClick={chats.more}>
          More conversations
        </button>
      )}
      {chatId && (
        <section aria-label={`Messages with ${chatId}`}>
          <h4>Messages</h4>
          {messages.error && <p class="error">{messages.error}</p>}
          {/* Above the list: the list shows the newest last, so older ones come in on top. */}
          {messages.more && (
            <button type="button" class="secondary more" onClick={messages.more}>
              Older messages
            </button>
          )}
          {messages.items && (
            <ol class="messages" reversed data-testid="messages" tabIndex={0} aria-label="Newest messages last">
              {messages.items.map((message) => (
                <MessageItem key={message.waMessageId} api={api} message={message} onReply={setReplyTo} />
              ))}
            </ol>
          )}

          <Composer
            {...props}
            chatId={chatId}
            replyTo={replyTo}
            onSent={() => {
              setReplyTo(null);
              messages.reload();
            }}
          />
        </section>
      )}
    </div>
  );
}
