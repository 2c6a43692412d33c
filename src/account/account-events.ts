/**
 * Events of a device's account stream (`account-<deviceId>`): what this device changed about the account
 * (its name and about text, the numbers it blocks) and the blocklist as the network reported it.
 */
export const accountStream = (deviceId: string) => `account-${deviceId}`;

export interface ProfileChangedData {
  deviceId: string;
  name?: string;
  about?: string;
}

export interface ContactBlockedData {
  deviceId: string;
  number: string;
}

export interface BlocklistRefreshedData {
  deviceId: string;
  /** Every number blocked, as the network lists them. */
  numbers: string[];
}

export type AccountEvent =
  | { type: 'ProfileChanged'; data: ProfileChangedData }
  | { type: 'ContactBlocked'; data: ContactBlockedData }
  | { type: 'ContactUnblocked'; data: ContactBlockedData }
  | { type: 'BlocklistRefreshed'; data: BlocklistRefreshedData };

export const ACCOUNT_EVENT_TYPES: ReadonlySet<string> = new Set<AccountEvent['type']>([
  'ProfileChanged',
  'ContactBlocked',
  'ContactUnblocked',
  'BlocklistRefreshed',
]);
