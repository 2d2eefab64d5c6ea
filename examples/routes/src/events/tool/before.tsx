import type { AgentEventRouteConfig, AgentEventRouteProps } from 'agent-bundle';
import { Deny } from '../components/Reason.tsx';

export const config = {
  runtime: 'standalone',
  timeoutMs: 2_000,
  tools: ['shell'],
} satisfies AgentEventRouteConfig;

const FORBIDDEN = /\brm\s+-rf\s+\/(\s|$)|ROUTES_DENY_ME/;

export default async function GuardShell({ canonical }: AgentEventRouteProps) {
  const input = canonical.payload.toolInput as { command?: string; cmd?: string };
  const command = input.command ?? input.cmd ?? '';
  return FORBIDDEN.test(command) ? <Deny reason={`routes: refusing ${command}`} /> : null;
}
