import { record } from './lib/log.js';

export default (event: { toolName: string }) => {
  record('afterTool', { tool: event.toolName });
};
