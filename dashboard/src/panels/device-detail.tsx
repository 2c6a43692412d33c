import { useState } from 'preact/hooks';
import type { DetailProps } from './detail-props.js';
import { DeviceSettings } from './device-settings.js';
import { History } from './history.js';
import { Inbox } from './inbox.js';
import { Keys } from './keys.js';
import { Outbox } from './outbox.js';
import { PacingSettings } from './pacing-settings.js';
import { SandboxControls } from './sandbox-controls.js';
import { SendText } from './send-text.js';
import { Session } from './session.js';
import { Webhook } from './webhook.js';

export function DeviceDetail(outer: Omit<DetailProps, 'bump'>) {
  // What this page did itself (queueing, cancelling) is not an event of the stream: reload after it too.
  const [local, setLocal] = useState(0);
  const props: DetailProps = { ...outer, version: outer.version + local, bump: () => setLocal((n) => n + 1) };
  const { device } = props;
  return (
    <section class="detail" aria-labelledby="detail-title">
      <h2 id="detail-title">
        {device.name} <span class="id">({device.id})</span>
      </h2>
      <DeviceSettings {...props} />
      <Session {...props} />
      {device.engine === 'sandbox' && <SandboxControls {...props} />}
      <Inbox {...props} />
      <SendText {...props} />
      <Outbox {...props} />
      <Webhook {...props} />
      <Keys {...props} />
      <PacingSettings {...props} />
      <History {...props} />
    </section>
  );
}
