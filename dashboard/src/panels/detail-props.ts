import type { GatewayApi } from '../api/client.js';
import type { Device } from '../api/types.js';
import type { Notify } from '../hooks/use-notice.js';

/** What every panel of the selected device gets. */
export interface DetailProps {
  api: GatewayApi;
  device: Device;
  /** Changes whenever an event of the device came, or the page did something the stream does not tell. */
  version: number;
  notify: Notify;
  onChanged: () => void;
  onDeleted: () => void;
  /** Says that the page itself changed something (queued, cancelled): the panels reload. */
  bump: () => void;
}
