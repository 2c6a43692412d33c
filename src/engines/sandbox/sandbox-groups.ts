/**
 * Groups of the simulated network: ids shaped as WhatsApp's (`120363` + 12 digits + `@g.us`) and their
 * members' numbers. Sandbox devices whose number is a member receive the group's messages.
 */
import { randomInt } from 'node:crypto';

export interface SandboxGroup {
  groupId: string;
  subject: string;
  /** Numbers; the creator first. */
  members: Set<string>;
}

export const SANDBOX_GROUP_PATTERN = /^120363\d{12}@g\.us$/;

export function newSandboxGroupId(): string {
  let digits = '';
  for (let i = 0; i < 12; i++) digits += String(randomInt(10));
  return `120363${digits}@g.us`;
}

export class SandboxGroups {
  private readonly groups = new Map<string, SandboxGroup>();

  create(subject: string, members: readonly string[]): SandboxGroup {
    let groupId = newSandboxGroupId();
    while (this.groups.has(groupId)) groupId = newSandboxGroupId();
    const group = { groupId, subject, members: new Set(members) };
    this.groups.set(groupId, group);
    return group;
  }

  get(groupId: string): SandboxGroup | undefined {
    return this.groups.get(groupId);
  }
}
