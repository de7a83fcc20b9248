// tests/clients/mcp/test-mcp-sdk.mjs — the official Model Context Protocol SDK for
// TypeScript (npm @modelcontextprotocol/sdk, pinned in package-lock.json) as the client of
// `hanzo mcp` over stdio (TAP on stdout).
//
// Usage: node test-mcp-sdk.mjs HANZO STORIES260K.gguf STORE.db
// (run-mcp-sdk-test.sh makes STORE.db with libhzstore: a conversation "Trip with Maria
// Lopez" whose messages mention a walrus tour, her e-mail and phone.)
//
//  1. StdioClientTransport starts `hanzo mcp`; the handshake agrees on the SDK's newest
//     protocol version; serverInfo and the tools capability;
//  2. listTools() gives chat, redact, search_conversations with input and output schemas;
//  3. callTool chat (greedy) answers what `hanzo generate` writes for the same prompt; the
//     SDK checks every structuredContent against the tool's outputSchema;
//  4. callTool redact replaces the name, e-mail and phone;
//  5. callTool search_conversations finds both walrus messages, redacted;
//     with onprogress, the SDK's progress token brings notifications/progress;
//  6. an unknown tool is an McpError -32602; bad arguments a result with isError (the
//     2025-11-25 rule); ping; close() ends the server.
import { execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION, McpError, ProgressNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [hanzo, model, store] = process.argv.slice(2);
let n = 0;
let failed = false;
const check = (ok, what, detail) => {
  n++;
  console.log(`${ok ? 'ok' : 'not ok'} ${n} - ${what}`);
  if (!ok) {
    failed = true;
    for (const line of JSON.stringify(detail ?? null, null, 1).split('\n').slice(0, 30)) console.log(`#   ${line}`);
  }
};

async function main () {
  let stderr = '';
  const transport = new StdioClientTransport({
    command: hanzo,
    args: ['mcp', '-m', model, '--store', store, '--threads', '1'],
    env: { ...process.env },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d) => { stderr += d; });
  let exited = null;
  transport.onclose = () => { exited = true; };
  const client = new Client({ name: 'hanzo-mcp-sdk-test', version: '1.0.0' });
  await client.connect(transport);

  const info = client.getServerVersion();
  const caps = client.getServerCapabilities();
  check(info?.name === 'hanzo' && caps?.tools && transport.pid > 0,
    `connected over stdio (pid ${transport.pid}): serverInfo hanzo, tools capability`, { info, caps });
  // the SDK sends its newest version; hanzo mcp serves it, so it is the one agreed
  check(LATEST_PROTOCOL_VERSION === '2025-11-25' || LATEST_PROTOCOL_VERSION === '2025-06-18',
    `the SDK's newest protocol version ${LATEST_PROTOCOL_VERSION} is one hanzo mcp serves`);

  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  check(['chat', 'redact', 'search_conversations'].every((k) => byName[k]?.inputSchema?.type === 'object' &&
        byName[k]?.outputSchema?.type === 'object') && tools.length === 3,
    'listTools: chat, redact, search_conversations with input and output schemas', tools.map((t) => t.name));

  const expected = execFileSync(hanzo, ['generate', '-m', model, '-p', 'Once upon a time', '-n', '24',
    '--threads', '1'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).replace(/\n$/, '');
  const chat = await client.callTool({ name: 'chat',
    arguments: { prompt: 'Once upon a time', max_tokens: 24, temperature: 0 } });
  const c = chat.structuredContent;
  check(!chat.isError && c?.text === expected && c?.finish_reason === 'length' && c?.completion_tokens === 24 &&
        JSON.parse(chat.content[0].text).text === expected,
    'callTool chat (greedy): the text of `hanzo generate` for the same prompt, validated against outputSchema',
    { chat, expected });

  // onprogress makes the SDK send a progressToken. Its own progress handler runs in a
  // microtask and is dropped when the response came in the same read (a fast model: the
  // notifications and the result arrive together, and the response removes the handler
  // first), so the notifications are taken here, by a handler of the method, in order.
  const progress = [];
  client.setNotificationHandler(ProgressNotificationSchema, (note) => { progress.push(note.params); });
  const long = await client.callTool({ name: 'chat', arguments: { prompt: 'Once upon a time', max_tokens: 40,
    temperature: 0 } }, undefined, { onprogress: () => {} });
  check(!long.isError && long.structuredContent?.completion_tokens === 40 && progress.length === 3 &&
        progress.every((p, i) => p.total === 40 && p.progress === 1 + 16 * i &&
                                 p.progressToken === progress[0].progressToken),
    'callTool chat with a progress token: notifications/progress at tokens 1, 17, 33 of 40', { progress, long });

  const text = 'Mail Anna Schmidt at anna.schmidt@example.org or call +1 415 555 0132 today.';
  const red = await client.callTool({ name: 'redact', arguments: { text } });
  const r = red.structuredContent;
  check(!red.isError && r && !r.text.includes('anna.schmidt@example.org') && !r.text.includes('Anna Schmidt') &&
        !r.text.includes('555 0132') && r.text.includes('[EMAIL_1]') && r.text.includes('[PERSON_1]') &&
        ['PERSON', 'EMAIL', 'PHONE'].every((t) => r.entities.some((e) => e.type === t)),
    'callTool redact: name, e-mail and phone replaced', red);

  const found = await client.callTool({ name: 'search_conversations', arguments: { query: 'walrus', limit: 10 } });
  const s = found.structuredContent;
  const blob = JSON.stringify(s);
  check(!found.isError && s?.results?.length === 2 && s.results.every((x) => x.text.includes('walrus') &&
        x.text.includes('[PERSON_1]') && x.conversation_title === 'Trip with [PERSON_1]') &&
        !blob.includes('Maria') && !blob.includes('maria.lopez') && !blob.includes('555 0199'),
    'callTool search_conversations: both walrus messages, redacted', found);

  let err = null;
  try {
    await client.callTool({ name: 'translate', arguments: {} });
  } catch (e) {
    err = e;
  }
  check(err instanceof McpError && err.code === -32602, 'an unknown tool: McpError -32602', { err: String(err), code: err?.code });
  const bad = await client.callTool({ name: 'redact', arguments: { text: 'x', mode: 'blur' } });
  check(bad.isError === true && /mask, numbered, pseudonym/.test(bad.content?.[0]?.text),
    'bad arguments: a result with isError naming the modes', bad);
  const pong = await client.ping();
  check(pong && typeof pong === 'object', 'ping', pong);

  await client.close();
  for (let i = 0; i < 100 && !exited; i++) await new Promise((res) => setTimeout(res, 50));
  check(exited === true && /read-only/.test(stderr), 'close() ends hanzo mcp; its log went to stderr', { exited, stderr });
}

main().catch((e) => {
  check(false, `the SDK test threw: ${e?.stack || e}`);
}).finally(() => {
  console.log(`1..${n}`);
  process.exit(failed ? 1 : 0);
});
