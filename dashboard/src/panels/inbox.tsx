import { useState } from 'preact/hooks';
import type { MessageView } from '../api/types.js';
import { useLoaded } from '../hooks/use-loaded.js';
import { Composer } from './composer.js';
import type { DetailProps } from './detail-props.js';
import { MessageItem } from './message-item.js';

const CHATS = 50;
const MESSAGES = 50;

/** The device's conversations (GET /chats) and a chat's messages (GET /chats/:chatId/messages), with a composer. */
export function Inbox(props: DetailProps) {
  const { api, device, version } = props;
  const [chatId, setChatId] = useState<string | null>(null);
  const [replyTo, setReplyTo] = useState<MessageView | null>(null);
  const [chats, , chatsError] = useLoaded(() => api.chats(device.id, CHATS), [api, device.id, version]);
  const [messages, reloadMessages, messagesError] = useLoaded(
    () => (chatId ? api.chatMessages(device.id, chatId, MESSAGES) : Promise.resolve(null)),
    [api, device.id, chatId, version],
  );
  const open = (id: string) => {
    setChatId(id);
    setReplyTo(null);
  };
  return (
    <div class="card inbox" aria-labelledby="inbox-title">
      <h3 id="inbox-title">Inbox</h3>
      {chatsError && <p class="error">{chatsError}</p>}
      {chats && chats.items.length === 0 && <p>No conversations yet.</p>}
      {chats && chats.items.length > 0 && (
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
                <span class="last">
                  {chat.lastMessage?.fromMe ? 'You: ' : ''}
                  {chat.lastMessage ? chat.lastMessage.body || chat.lastMessage.type : ''}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {chatId && (
        <section aria-label={`Messages with ${chatId}`}>
          <h4>Messages</h4>
          {messagesError && <p class="error">{messagesError}</p>}
          {messages && (
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
              reloadMessages();
            }}
          />
        </section>
      )}
    </div>
  );
}
