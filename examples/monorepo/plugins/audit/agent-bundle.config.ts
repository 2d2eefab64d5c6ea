import { defineConfig } from 'agent-bundle/config';

export default defineConfig({
  hooks: {
    afterTool: './src/hooks/after-tool.ts',
  },
  plugin: { description: 'Logs every tool call, secrets masked.', name: 'audit' },
  targets: ['claude', 'codex', 'cursor'],
});
