import { useEffect, useState } from 'preact/hooks';
import type { GatewayApi } from '../api/client.js';

/**
 * A message's media as an object URL the page may show (the media route needs the key in a header, so an <img>
 * cannot load it by itself); revoked when the message leaves the page.
 */
export function useMediaUrl(api: GatewayApi, path: string | undefined): string | null {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!path) return;
    let made: string | null = null;
    let stopped = false;
    api.media(path).then(
      (blob) => {
        if (stopped) return;
        made = URL.createObjectURL(blob);
        setUrl(made);
      },
      () => setUrl(null),
    );
    return () => {
      stopped = true;
      if (made) URL.revokeObjectURL(made);
    };
  }, [api, path]);
  return url;
}
