import { record } from './lib/log.js';

export default (event: { agentType: string }) => {
  record('agentStart', { agent: event.agentType });
};
