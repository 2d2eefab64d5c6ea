// A scripted Anthropic Messages API (`POST /v1/messages`, streamed) for Claude Code.
// A {"shell": cmd} step answers with a `Bash` tool_use, a {"tool": name, "input": {…}} step
// with a tool_use of that tool; a {"text": t} step ends the turn.
// See mock-server.mjs for the options, the request log and the lifetime.

import { options, serve, sse } from './mock-server.mjs';

const MODEL = 'claude-mock';
let ids = 0;

serve(options(), '/v1/messages', (step, body, _request, response) => {
  const id = ++ids;
  const toolUse = (name, input) => ({ type: 'tool_use', id: `toolu_mock${String(id).padStart(4, '0')}`, name, input });
  const block = step.shell !== undefined ? toolUse('Bash', { command: step.shell, description: 'Run the scripted command' })
    : step.tool !== undefined ? toolUse(step.tool, step.input)
    : { type: 'text', text: step.text };
  const stopReason = block.type === 'tool_use' ? 'tool_use' : 'end_turn';
  const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const message = { id: `msg_mock${id}`, type: 'message', role: 'assistant', model: body?.model ?? MODEL, stop_sequence: null };

  if (!body?.stream) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ ...message, content: [block], stop_reason: stopReason, usage }));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  sse(response, 'message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
  if (block.type === 'tool_use') {
    sse(response, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { ...block, input: {} } });
    sse(response, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
  } else {
    sse(response, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    sse(response, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: block.text } });
  }
  sse(response, 'content_block_stop', { type: 'content_block_stop', index: 0 });
  sse(response, 'message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } });
  sse(response, 'message_stop', { type: 'message_stop' });
  response.end();
});
