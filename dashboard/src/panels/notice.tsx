import type { Notice as NoticeLine } from '../hooks/use-notice.js';

export function Notice({ notice, onDismiss }: { notice: NoticeLine | null; onDismiss: () => void }) {
  if (!notice) return null;
  return (
    <p role={notice.kind === 'error' ? 'alert' : 'status'} class={`notice ${notice.kind}`}>
      {notice.text}{' '}
      <button type="button" class="link" onClick={onDismiss} aria-label="Dismiss message">
        ×
      </button>
    </p>
  );
}
