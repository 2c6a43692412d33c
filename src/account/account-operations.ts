/**
 * What a live engine connection does with the account itself (the engine port's `account`,
 * src/engines/engine.ts): its profile, other numbers' about texts, blocking, rejecting calls.
 * Declared here so that the account folder never needs the engines.
 */
export interface OwnProfile {
  name?: string;
  /** The account's about text; null when it has none. */
  about?: string | null;
  avatarUrl?: string | null;
}

export interface AccountOperations {
  profile(): Promise<OwnProfile>;
  setName(name: string): Promise<void>;
  setAbout(about: string): Promise<void>;
  /** Another number's about text; null when it has none or hides it. */
  about(number: string): Promise<string | null>;
  block(number: string): Promise<void>;
  unblock(number: string): Promise<void>;
  /** The numbers the account blocks. */
  blocked(): Promise<string[]>;
}
