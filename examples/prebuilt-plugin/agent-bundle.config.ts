import { defineConfig } from 'agent-bundle/config';

export default defineConfig({
  hooks: {
    afterTool: [{
      args: ['--host', 'claude'],
      handler: { prebuilt: './dist/runtime/hook/index.js' },
      targets: ['claude'],
      tools: ['file.write'],
    }],
  },
  payload: { runtime: { source: './dist/runtime', targets: ['claude'] } },
  plugin: { description: 'Self-compiled runtime.', name: 'prebuilt-plugin' },
  targets: ['claude'],
});
