// Prints src/bundle/node-builtins.txt: Node's builtin modules and the names each exports to
// an ES module (besides `default`, which every one has), as the Node running this sees them.
// The bundler checks a handler's named imports of a builtin against that table, so a name
// missing from the oldest Node the wrappers support is a build error rather than a hook that
// fails to load. Run it with that Node: `node scripts/node-builtins.mjs > src/bundle/node-builtins.txt`.
import { builtinModules } from 'node:module';

// Builtins that exist only with the `node:` prefix are not in `builtinModules`.
const PREFIXED_ONLY = ['node:sea', 'node:test', 'node:test/reporters'];
const WIDTH = 100;

const lines = [
  `# The ES module exports of Node's builtins, besides \`default\` (Node ${process.version}).`,
  '# Written by scripts/node-builtins.mjs; a module named with `node:` exists only with that prefix.',
];
// (A newer Node lists some of them too.)
for (const name of [...new Set([...builtinModules, ...PREFIXED_ONLY])].sort()) {
  const namespace = await import(name.startsWith('node:') ? name : `node:${name}`);
  lines.push(`${name}:`);
  let line = '';
  for (const exported of Object.keys(namespace).filter((key) => key !== 'default').sort()) {
    if (line && line.length + 1 + exported.length > WIDTH) {
      lines.push(line);
      line = '';
    }
    line += `${line ? ' ' : '    '}${exported}`;
  }
  if (line) lines.push(line);
}
process.stdout.write(`${lines.join('\n')}\n`);
