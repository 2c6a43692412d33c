import type { DeviceView } from '../devices/devices-read-model.js';
import type { DeviceLookup, RequestDevice } from './route.js';

export interface DeviceLookupSources {
  /** The devices read model. */
  devices: { get(deviceId: string): DeviceView | undefined; sessionState(deviceId: string): string | undefined };
  /** The session actors this process runs. */
  sessions: { state(deviceId: string): string | undefined };
}

/** The router's device of a request: the read model's view, and the session state this process knows best. */
export function deviceLookup(sources: DeviceLookupSources): DeviceLookup {
  return (deviceId) => {
    const view = sources.devices.get(deviceId);
    return view && new LoadedDevice(deviceId, view, sources);
  };
}

/** A class rather than an object with a closure: it is made on every device request. */
class LoadedDevice implements RequestDevice {
  constructor(
    readonly id: string,
    readonly view: DeviceView,
    private readonly sources: DeviceLookupSources,
  ) {}

  /** The actor's state when this process runs one, else the read model's. */
  sessionState(): string {
    return (
      this.sources.sessions.state(this.id) ?? this.sources.devices.sessionState(this.id) ?? this.view.session.state
    );
  }
}
