// Built by the project's own toolchain; agent-bundle copies it byte for byte.
import { readFileSync } from 'node:fs';

const host = process.argv[process.argv.indexOf('--host') + 1];
const event = JSON.parse(readFileSync(0, 'utf8'));
const file = event.tool_input?.file_path ?? '(unknown file)';
process.stdout.write(JSON.stringify({
  hookSpecificOutput: {
    hookEventName: 'PostToolUse',
    additionalContext: `${host} wrote ${file}; the runtime formatter will pick it up.`,
  },
}));
