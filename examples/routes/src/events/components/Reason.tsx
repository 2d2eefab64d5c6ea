import { Agent } from '@agent-bundle/runtime';

/** A denial with its reason, shared by the routes that block. */
export function Deny({ reason }: { reason: string }) {
  return <Agent.Result value={{ outcome: 'deny', reason }} />;
}
