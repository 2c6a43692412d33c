import { useCallback, useState } from 'preact/hooks';

export type NoticeKind = 'ok' | 'error';
export interface Notice {
  text: string;
  kind: NoticeKind;
}
/** Shows one line at the top of the page: what an action did, or why it failed. */
export type Notify = (text: string, kind?: NoticeKind) => void;

export function useNotice(): { notice: Notice | null; notify: Notify; dismiss: () => void } {
  const [notice, setNotice] = useState<Notice | null>(null);
  const notify: Notify = useCallback((text, kind = 'ok') => setNotice({ text, kind }), []);
  const dismiss = useCallback(() => setNotice(null), []);
  return { notice, notify, dismiss };
}
