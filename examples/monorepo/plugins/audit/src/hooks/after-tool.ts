import { record } from '../../../../shared/log.js';

export default (event: { toolName: string; toolInput: { command?: string } }) => {
  record('audit', 'afterTool', { tool: event.toolName, command: event.toolInput.command });
};
