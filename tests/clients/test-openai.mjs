// tests/clients/test-openai.mjs — the official OpenAI SDK for Node (npm `openai`, pinned in
// package-lock.json) as the client of `hanzo serve` (TAP on stdout).
//
// Usage: node test-openai.mjs HANZO STORIES260K.gguf CHAT.gguf TOOL.gguf HARMONY.gguf TALKER.gguf
// (run-openai-test.sh makes CHAT.gguf: stories260K with a chat template of its own, and
// TOOL.gguf and HARMONY.gguf: tests/server/tool-model.h's scripted models with Qwen3's and
// gpt-oss's templates, whose reply is a call of get_weather for Paris; TALKER.gguf the same
// with Qwen3's template answering in words, never with a call.)
//
//  1. models.list() names the five models;
//  2. a greedy completion equals `hanzo generate`'s text for the same prompt;
//  3. 16 concurrent streaming chat completions, each streamed in several chunks and ending
//     with a finish_reason; the greedy ones equal the same request made alone;
//  4. an unknown model: 404 with an OpenAI error body (the SDK's NotFoundError);
//  5. malformed JSON (sent with fetch: the SDK only sends valid JSON): 400 with an error
//     body, and the server still serving (models.list, a completion) after both;
//  6. tools: the tool model's call parsed into message.tool_calls (name, arguments,
//     finish_reason 'tool_calls'), streamed as delta.tool_calls, and a second turn that
//     carries the call and the tool's answer; gpt-oss's harmony format; malformed tools
//     answered 400; tool_choice enforced: a named function the model would not call, and
//     "required" of a model that answers in words (whole and streamed), both with
//     arguments of the tool's schema; parallel_tool_calls false gives one call.
//  7. response_format: json_object gives text that JSON.parse reads as an object (whole and
//     streamed), json_schema text that parses with the schema's required members and types,
//     also with max_tokens at its shortest text's 32 bytes, and a schema keyword outside the
//     subset a 400 (BadRequestError) naming it.
import { spawn, execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import OpenAI from 'openai';

const [hanzo, stories, chatModel, toolModel, harmonyModel, talkerModel] = process.argv.slice(2);
const results = [];
const check = (ok, what, detail) => {
  results.push({ ok: !!ok, what, detail });
};

function startServer () {
  const proc = spawn(hanzo, ['serve', '-m', stories, '-m', `${chatModel}:chat`, '-m',
    `${toolModel}:tool`, '-m', `${harmonyModel}:harmony`, '-m', `${talkerModel}:talker`, '--port', '0', '--threads', '2'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stderr.on('data', (d) => { log += d; });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout });
    lines.once('line', (line) => {
      const m = /^listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(line);
      if (m) resolve({ proc, base: m[1], log: () => log });
      else reject(new Error(`unexpected first line: ${line}`));
    });
    proc.once('exit', (code) => reject(new Error(`hanzo serve exited (${code}): ${log}`)));
  });
}

async function streamChat (client, content, opts) {
  const stream = await client.chat.completions.create({
    model: 'chat',
    messages: [{ role: 'user', content }],
    max_tokens: 40,
    stream: true,
    ...opts,
  });
  let text = '';
  let contentChunks = 0;
  let finish = null;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    const c = chunk.choices[0];
    if (!c) continue;
    if (c.delta?.content) {
      text += c.delta.content;
      contentChunks++;
    }
    if (c.finish_reason) finish = c.finish_reason;
  }
  return { text, contentChunks, finish, chunks };
}

async function main () {
  const server = await startServer();
  const client = new OpenAI({ baseURL: `${server.base}/v1`, apiKey: 'not-needed-on-loopback',
    maxRetries: 0, timeout: 120000 });
  try {
    // 1. models.list
    const ids = [];
    for await (const m of client.models.list()) ids.push(m.id);
    check(ids.includes('stories260K') && ids.includes('chat') && ids.includes('tool') &&
      ids.includes('harmony') && ids.includes('talker') && ids.length === 5,
    'models.list() names stories260K, chat, tool, harmony and talker', ids.join(', '));

    // 2. greedy completion = hanzo generate
    const prompt = 'Once upon a time';
    const want = JSON.parse(execFileSync(hanzo, ['generate', '-m', stories, '-p', prompt, '-n',
      '48', '--json'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString()).text;
    const cmpl = await client.completions.create({ model: 'stories260K', prompt,
      max_tokens: 48, temperature: 0 });
    check(cmpl.choices[0].text === want && want.length > 20,
      'a greedy completion equals hanzo generate\'s text', JSON.stringify(cmpl.choices[0].text));

    // 3. 16 concurrent streaming chat completions
    const alone = await streamChat(client, 'Tell me about the dog 0', { temperature: 0 });
    const runs = await Promise.all(Array.from({ length: 16 }, (_, i) =>
      streamChat(client, `Tell me about the dog ${i % 4}`, i % 2
        ? { temperature: 0.9, seed: i } : { temperature: 0 })));
    // every stream comes in several chunks (the role, the text, the finish_reason); the text
    // itself in many (a stream whose main-loop turns were all late on a busy machine may get
    // its text in one: the server sends what came meanwhile together)
    const total = runs.reduce((n, r) => n + r.contentChunks, 0);
    const streamed = runs.every((r) => r.chunks >= 3 && r.contentChunks >= 1 && r.finish !== null) &&
      total >= 16 * 10;
    check(streamed, '16 concurrent streams, each in several chunks with a finish_reason',
      `${total} text chunks: ` + runs.map((r) => `${r.chunks}/${r.contentChunks}/${r.finish}`).join(' '));
    check(runs[0].text === alone.text && runs[8].text === alone.text && alone.text.length > 0,
      'the greedy streams among them equal the same request made alone', JSON.stringify(alone.text));

    // 4. unknown model
    let nf = null;
    try {
      await client.chat.completions.create({ model: 'no-such-model',
        messages: [{ role: 'user', content: 'hi' }] });
    } catch (e) {
      nf = e;
    }
    check(nf instanceof OpenAI.NotFoundError && nf.status === 404 && nf.code === 'model_not_found' &&
      typeof nf.error?.message === 'string',
    'an unknown model: 404 with an error body (NotFoundError, code model_not_found)',
    nf ? `${nf.status} ${nf.code}: ${nf.error?.message}` : 'no error');

    // 5. malformed JSON, then still serving
    const res = await fetch(`${server.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"model": "chat", "messages": [',
    });
    const body = await res.json().catch(() => null);
    check(res.status === 400 && body?.error?.code === 'invalid_json' &&
      typeof body.error.message === 'string' && typeof body.error.type === 'string',
    'malformed JSON: 400 with an error body', `${res.status} ${JSON.stringify(body)}`);
    const after = [];
    for await (const m of client.models.list()) after.push(m.id);
    const again = await client.completions.create({ model: 'stories260K', prompt,
      max_tokens: 48, temperature: 0 });
    check(after.length === 5 && again.choices[0].text === want,
      'the server serves on after both errors', after.join(', '));

    // 6. tools: a tool call parsed into tool_calls
    const tools = [{ type: 'function', function: { name: 'get_weather',
      description: 'Current weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
    const ask = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const isWeather = (c) => c?.type === 'function' && c.function.name === 'get_weather' &&
      JSON.stringify(JSON.parse(c.function.arguments)) === '{"city":"Paris"}' && /^call_/.test(c.id);
    const tc = await client.chat.completions.create({ model: 'tool', messages: ask, tools,
      temperature: 0 });
    const m = tc.choices[0].message;
    check(m.tool_calls?.length === 1 && isWeather(m.tool_calls[0]) && m.content === null &&
      tc.choices[0].finish_reason === 'tool_calls',
    'a tool call parsed into message.tool_calls (finish_reason tool_calls)', JSON.stringify(tc.choices[0]));

    const stream = await client.chat.completions.create({ model: 'tool', messages: ask, tools,
      stream: true });
    const calls = [];
    let sfinish = null;
    let stext = '';
    for await (const chunk of stream) {
      const c = chunk.choices[0];
      if (!c) continue;
      for (const d of c.delta?.tool_calls ?? []) {
        calls[d.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } };
        if (d.id) calls[d.index].id += d.id;
        if (d.function?.name) calls[d.index].function.name += d.function.name;
        if (d.function?.arguments) calls[d.index].function.arguments += d.function.arguments;
      }
      if (c.delta?.content) stext += c.delta.content;
      if (c.finish_reason) sfinish = c.finish_reason;
    }
    check(calls.length === 1 && isWeather(calls[0]) && sfinish === 'tool_calls' && stext === '',
      'streamed: the call in delta.tool_calls, finish_reason tool_calls', JSON.stringify(calls));

    const second = await client.chat.completions.create({ model: 'tool', tools, messages: [
      ...ask, m, { role: 'tool', tool_call_id: m.tool_calls[0].id, content: '{"temp_c": 18}' }] });
    check(second.choices[0].message.tool_calls?.length === 1 &&
      second.usage.prompt_tokens > tc.usage.prompt_tokens,
    'a second turn carries the call and the tool message', JSON.stringify(second.usage));

    const hc = await client.chat.completions.create({ model: 'harmony', messages: ask, tools });
    check(hc.choices[0].message.tool_calls?.length === 1 && isWeather(hc.choices[0].message.tool_calls[0]) &&
      hc.choices[0].message.content === null && hc.choices[0].finish_reason === 'tool_calls',
    'gpt-oss\'s harmony format: the call in message.tool_calls', JSON.stringify(hc.choices[0].message));

    let badTools = null;
    try {
      await client.chat.completions.create({ model: 'tool', messages: ask,
        tools: [{ type: 'function', function: { name: 'no spaces allowed' } }] });
    } catch (e) {
      badTools = e;
    }
    check(badTools instanceof OpenAI.BadRequestError && badTools.param === 'tools',
      'malformed tools: 400 (BadRequestError, param tools)', badTools && badTools.message);

    // tool_choice enforced by constrained sampling
    const tools2 = [...tools, { type: 'function', function: { name: 'get_time',
      description: 'The time in a zone', parameters: { type: 'object', additionalProperties: false,
        properties: { zone: { enum: ['UTC', 'CET'] } }, required: ['zone'] } } }];
    const isTime = (c) => c?.function.name === 'get_time' &&
      ['UTC', 'CET'].includes(JSON.parse(c.function.arguments).zone) &&
      Object.keys(JSON.parse(c.function.arguments)).length === 1;
    const isCall = (c) => isTime(c) || (c?.function.name === 'get_weather' &&
      typeof JSON.parse(c.function.arguments).city === 'string');
    const named = await client.chat.completions.create({ model: 'tool', messages: ask, tools: tools2,
      max_tokens: 128, tool_choice: { type: 'function', function: { name: 'get_time' } } });
    check(named.choices[0].message.tool_calls?.length === 1 && isTime(named.choices[0].message.tool_calls[0]) &&
      named.choices[0].finish_reason === 'tool_calls',
    'tool_choice naming get_time: that call, though the model calls get_weather by itself',
    JSON.stringify(named.choices[0].message));
    const words = await client.chat.completions.create({ model: 'talker', messages: ask, tools: tools2 });
    const required = [];
    for (const seed of [1, 2]) {
      const r = await client.chat.completions.create({ model: 'talker', messages: ask, tools: tools2,
        max_tokens: 128, tool_choice: 'required', seed, parallel_tool_calls: seed === 2 ? false : undefined });
      required.push(r.choices[0]);
    }
    const rs = await client.chat.completions.create({ model: 'talker', messages: ask, tools: tools2,
      max_tokens: 128, tool_choice: 'required', stream: true });
    const rcalls = [];
    let rfinish = null;
    for await (const chunk of rs) {
      const c = chunk.choices[0];
      for (const d of c?.delta?.tool_calls ?? []) {
        rcalls[d.index] ??= { function: { name: '', arguments: '' } };
        if (d.function?.name) rcalls[d.index].function.name += d.function.name;
        if (d.function?.arguments) rcalls[d.index].function.arguments += d.function.arguments;
      }
      if (c?.finish_reason) rfinish = c.finish_reason;
    }
    check(words.choices[0].message.content === 'It is sunny today.' && !words.choices[0].message.tool_calls &&
      required.every((c) => c.finish_reason === 'tool_calls' && c.message.tool_calls.length >= 1 &&
        c.message.tool_calls.every(isCall)) && required[1].message.tool_calls.length === 1 &&
      rcalls.length >= 1 && rcalls.every(isCall) && rfinish === 'tool_calls',
    'tool_choice required: a model that answers in words calls a tool (whole, streamed, parallel_tool_calls false: one)',
    JSON.stringify([words.choices[0].message, ...required.map((c) => c.message), rcalls]));

    // 7. response_format
    const parsed = (text) => { try { return JSON.parse(text); } catch { return undefined; } };
    const objects = [];
    for (const [i, opts] of [{ temperature: 0 }, { temperature: 1, seed: 3 }].entries()) {
      const r = await client.chat.completions.create({ model: 'chat', max_tokens: 48, ...opts,
        messages: [{ role: 'user', content: 'Describe the dog as JSON' }],
        response_format: { type: 'json_object' } });
      objects.push(r.choices[0].message.content);
      const s = await streamChat(client, `Describe dog ${i} as JSON`,
        { ...opts, response_format: { type: 'json_object' } });
      objects.push(s.text);
    }
    check(objects.every((t) => { const v = parsed(t); return v && typeof v === 'object' && !Array.isArray(v); }),
      'response_format json_object: JSON.parse reads an object (whole and streamed)',
      objects.map((t) => JSON.stringify(t)).join(' | '));
    const schema = { type: 'object', additionalProperties: false, required: ['name', 'age', 'friends'],
      properties: { name: { type: 'string' }, age: { type: 'integer' },
        friends: { type: 'array', items: { type: 'string' }, maxItems: 2 },
        mood: { enum: ['happy', 'sad'] } } };
    const people = [];
    for (const max of [120, 40, 32]) {
      const r = await client.chat.completions.create({ model: 'chat', max_tokens: max, temperature: 0.8,
        seed: max, messages: [{ role: 'user', content: 'Who is Lily?' }],
        response_format: { type: 'json_schema', json_schema: { name: 'person', strict: true, schema } } });
      people.push(r.choices[0].message.content);
    }
    check(people.every((t) => {
      const v = parsed(t);
      return v && typeof v.name === 'string' && Number.isInteger(v.age) && Array.isArray(v.friends) &&
        v.friends.length <= 2 && v.friends.every((f) => typeof f === 'string') &&
        (v.mood === undefined || ['happy', 'sad'].includes(v.mood)) &&
        Object.keys(v).every((k) => k in schema.properties);
    }), 'response_format json_schema: parses, with the required members and their types',
    people.map((t) => JSON.stringify(t)).join(' | '));
    let bad = null;
    try {
      await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }],
        response_format: { type: 'json_schema',
          json_schema: { name: 'x', schema: { type: 'object', properties: { a: { type: 'string', pattern: '^a' } } } } } });
    } catch (e) {
      bad = e;
    }
    check(bad instanceof OpenAI.BadRequestError && bad.status === 400 &&
      bad.code === 'unsupported_parameter' && /'pattern' at \/properties\/a/.test(bad.error?.message),
    'a schema keyword outside the subset: 400 naming it', bad ? `${bad.status} ${bad.error?.message}` : 'no error');
  } finally {
    server.proc.kill('SIGTERM');
  }
}

main().catch((e) => check(false, 'the SDK test ran to its end', e.stack)).finally(() => {
  console.log(`1..${results.length}`);
  results.forEach((r, i) => {
    console.log(`${r.ok ? 'ok' : 'not ok'} ${i + 1} - ${r.what}`);
    if (r.detail) console.log(`# ${String(r.detail).replace(/\n/g, '\n# ')}`);
  });
  process.exitCode = results.every((r) => r.ok) ? 0 : 1;
});
