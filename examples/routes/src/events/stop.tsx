import type { AgentEventRouteProps } from 'agent-bundle';
import { Deny } from './components/Reason.tsx';

/** Asks for one more pass (once) when ROUTES_BLOCK_STOP=1. */
export default async function KeepGoing({ canonical }: AgentEventRouteProps) {
  const again = canonical.payload.stopHookActive === true;
  if (process.env.ROUTES_BLOCK_STOP !== '1' || again) return null;
  return <Deny reason="routes: list the files you changed before stopping" />;
}
