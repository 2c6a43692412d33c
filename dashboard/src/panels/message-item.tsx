import type { GatewayApi } from '../api/client.js';
import type { MessageView } from '../api/types.js';
import { useMediaUrl } from '../hooks/use-media-url.js';

const timeOf = (unixSeconds: number) => new Date(unixSeconds * 1000).toLocaleString();
/** Who reacted, in words: the account itself or the sender's number. */
const reactor = (reaction: MessageView['reactions'][number]) =>
  reaction.fromMe ? 'You' : reaction.from.includes('@') ? reaction.from : `+${reaction.from}`;

/** One message of a chat: who, when, what (media shown), its status and reactions. */
export function MessageItem({
  api,
  message,
  onReply,
}: {
  api: GatewayApi;
  message: MessageView;
  onReply: (message: MessageView) => void;
}) {
  const media = useMediaUrl(api, message.media?.url);
  const isImage = message.media?.mimetype?.startsWith('image/') === true;
  return (
    <li class={message.fromMe ? 'message mine' : 'message'} data-testid={`message-${message.waMessageId}`}>
      <p class="meta">
        {message.fromMe ? 'You' : `+${message.participant ?? message.from}`} · <time>{timeOf(message.timestamp)}</time>
        {message.status && (
          <>
            {' '}
            · <span class={`badge ${message.status}`}>{message.status}</span>
          </>
        )}
        {message.edited && ' · edited'}
      </p>
      {message.quoted && <blockquote>{message.quoted.body || message.quoted.type}</blockquote>}
      {message.media &&
        (media && isImage ? (
          <img class="media" src={media} alt={message.body || 'an image'} />
        ) : media ? (
          <a href={media} download={message.media.filename ?? 'media'}>
            {message.media.filename ?? message.type} ({message.media.mimetype ?? 'file'})
          </a>
        ) : (
          <p class="hint">[{message.type}]</p>
        ))}
      <p class="body">{message.revoked ? <em>deleted</em> : message.body}</p>
      {message.reactions.length > 0 && (
        <ul class="reactions" aria-label="Reactions" data-testid={`reactions-${message.waMessageId}`}>
          {message.reactions.map((reaction) => (
            <li key={reaction.fromMe ? '' : reaction.from} title={reactor(reaction)}>
              {reaction.emoji} <span class="who">{reactor(reaction)}</span>
            </li>
          ))}
        </ul>
      )}
      {!message.revoked && (
        <button
          type="button"
          class="link"
          onClick={() => onReply(message)}
          aria-label={`Reply to ${message.waMessageId}`}
        >
          Reply
        </button>
      )}
    </li>
  );
}
