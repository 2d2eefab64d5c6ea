import { defineConfig } from 'agent-bundle/config';

// One policy, every host: Claude Code, Codex and Cursor each get native hooks.
export default defineConfig({
  hooks: {
    sessionStart: './src/hooks/session-start.ts',
    beforeTool: { handler: './src/hooks/deny-dangerous.ts', tools: ['shell'], timeout: 10 },
    afterTool: { handler: './src/hooks/after-tool.ts', tools: ['shell', 'file.write'] },
    stop: './src/hooks/stop.ts',
    agentStart: './src/hooks/agent-start.ts',
    agentStop: './src/hooks/agent-stop.ts',
  },
  plugin: { name: 'policy', description: 'Deny dangerous shell commands and keep the agent honest.', version: '1.2.0' },
  targets: ['claude', 'codex', 'cursor', 'portable'],
});
