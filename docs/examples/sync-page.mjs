// Copies each example file into its code block on docs/examples.md: the block whose fence names it
// (```js file=state/runtime.mjs). Run it after changing an example: node docs/examples/sync-page.mjs
// test/e2e/example-runtimes.e2e-spec.ts fails while a block and its file differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { URL } from 'node:url';

const page = new URL('../examples.md', import.meta.url);
const source = readFileSync(page, 'utf8');
const synced = source.replace(/^```(\S+) file=(\S+)\n[\s\S]*?^```$/gm, (_block, lang, file) => {
  const text = readFileSync(new URL(file, import.meta.url), 'utf8').replace(/\n$/, '');
  return `\`\`\`${lang} file=${file}\n${text}\n\`\`\``;
});
writeFileSync(page, synced);
console.log(synced === source ? 'docs/examples.md was up to date' : 'docs/examples.md updated');
