import { record } from './lib/log.js';

export default (event: { agentType: string }) => {
  record('agentStop', { agent: event.agentType });
};
