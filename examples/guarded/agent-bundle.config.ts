import { defineConfig } from 'agent-bundle/config';

export default defineConfig({
  hooks: {
    beforeTool: [
      './src/hooks/audit.ts',
      {
        handler: './src/hooks/guard-writes.ts',
        targets: ['claude'],
        timeout: 10,
        tools: ['file.write', 'shell'],
      },
    ],
  },
  plugin: { description: 'Guarded tooling.', name: 'guarded' },
  targets: ['portable', 'claude'],
});
