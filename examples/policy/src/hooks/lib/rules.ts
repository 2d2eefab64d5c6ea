/** Shell commands the policy refuses, with the reason the agent is told. */
export const DENIED: ReadonlyArray<{ pattern: RegExp; reason: string }> = [
  { pattern: /\brm\s+-rf?\s+\/(\s|$)/, reason: 'policy: removing the file system root is never allowed' },
  { pattern: /\bgit\s+push\s+--force\b/, reason: 'policy: force-pushing rewrites shared history' },
  { pattern: /POLICY_DENY_ME/, reason: 'policy: the command carries the POLICY_DENY_ME marker' },
];

export function denial(command: string): string | undefined {
  return DENIED.find((rule) => rule.pattern.test(command))?.reason;
}
