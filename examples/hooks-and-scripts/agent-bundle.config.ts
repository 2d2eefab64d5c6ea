import { defineConfig } from 'agent-bundle/config';

export default defineConfig({
  hooks: {
    sessionStart: { handler: './src/hooks/session-start.ts' },
  },
  plugin: {
    name: 'hooks-and-scripts',
    description: 'Release preparation helpers.',
  },
  targets: ['portable', 'codex', 'claude'],
});
