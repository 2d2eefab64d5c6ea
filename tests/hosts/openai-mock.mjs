// A scripted OpenAI Responses API (`POST /v1/responses`, streamed) for the Codex CLI.
// A {"shell": cmd} step answers with a call of Codex's shell tool (`exec_command`,
// arguments {"cmd": …}), a {"tool": name, "input": {…}, "namespace"?: ns} step with a call of
// that tool; a {"text": t} step answers with a final assistant message.
// See mock-server.mjs for the options, the request log and the lifetime.

import { options, serve, sse } from './mock-server.mjs';

let ids = 0;

serve(options(), '/v1/responses', (step, body, _request, response) => {
  const id = ++ids;
  const call = (name, input, namespace) => ({ type: 'function_call', id: `fc_mock${id}`, call_id: `call_mock${String(id).padStart(4, '0')}`, name, arguments: JSON.stringify(input), status: 'completed', ...(namespace === undefined ? {} : { namespace }) });
  const item = step.shell !== undefined ? call('exec_command', { cmd: step.shell })
    : step.tool !== undefined ? call(step.tool, step.input, step.namespace)
    : { type: 'message', id: `msg_mock${id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: step.text, annotations: [] }] };
  const created = { id: `resp_mock${id}`, object: 'response', model: body?.model ?? 'mock', status: 'in_progress', output: [] };
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };

  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  sse(response, 'response.created', { type: 'response.created', response: created });
  sse(response, 'response.output_item.added', { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress' } });
  if (item.type === 'message') {
    sse(response, 'response.output_text.delta', { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: step.text });
  }
  sse(response, 'response.output_item.done', { type: 'response.output_item.done', output_index: 0, item });
  sse(response, 'response.completed', { type: 'response.completed', response: { ...created, status: 'completed', output: [item], usage } });
  response.end();
});
