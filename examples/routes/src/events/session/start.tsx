import { Agent } from '@agent-bundle/runtime';
import type { AgentEventRouteProps } from 'agent-bundle';

export default async function Welcome({ canonical }: AgentEventRouteProps) {
  return (
    <Agent.Result>
      <Agent.Context>{`Session ${canonical.payload.sessionId} started on ${canonical.provenance.host} (routes plugin).`}</Agent.Context>
    </Agent.Result>
  );
}
