import { defineConfig } from 'agent-bundle/config';

export default defineConfig({
  hooks: {
    beforeTool: { handler: './src/hooks/no-secrets.ts', tools: ['shell'] },
  },
  plugin: { description: 'Denies shell commands that carry a secret.', name: 'guard' },
  targets: ['claude', 'codex', 'cursor'],
});
