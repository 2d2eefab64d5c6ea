import { defineConfig } from 'agent-bundle/config';

// No config hooks: every hook of this plugin is an event route under src/events/.
export default defineConfig({
  plugin: { name: 'routes', description: 'Event routes rendered as server components.', version: '0.3.0' },
  targets: ['claude', 'codex', 'cursor'],
});
