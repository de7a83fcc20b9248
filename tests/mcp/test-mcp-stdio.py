#!/usr/bin/env python3
"""tests/mcp/test-mcp-stdio.py — meson test `mcp-stdio` (TAP): the real `hanzo mcp` driven
through pipes, as an MCP client runs it.

Usage: test-mcp-stdio.py HANZO MAKE_MCP_STORE   (HZ_SHARED_DIR: ../shared; skips without
stories260K)

Covers: the handshake (initialize, notifications/initialized, ping before and after),
version negotiation (2025-06-18 asked and answered; an unknown version answered with the
newest; 2024-11-05 without the newer fields; 2025-03-26 with batches; 2025-11-25's tool
errors for bad arguments), tools/list, each tool on a real model and a real store made by
libhzstore (chat greedy equal to `hanzo generate`, seeded sampling repeatable; redact in
every mode; search_conversations redacted, the store file unchanged), every JSON-RPC error
code, the size and depth limits, notifications and responses never answered, stdout
holding only protocol lines, no socket in the running process, exit 0 at the end of stdin;
notifications/cancelled of a queued chat call and of a running one (stories-distill):
never answered, the generation stopped, the session going on.
"""
import hashlib
import json
import os
import select
import subprocess
import sys
import tempfile
import time

HANZO, MAKE_STORE = sys.argv[1], sys.argv[2]
SHARED = os.environ.get('HZ_SHARED_DIR') or os.path.join(os.path.dirname(__file__), '..', '..', '..', 'shared')
MODEL = os.path.join(SHARED, 'models', 'stories260K.gguf')

n = 0
failed = False


def ok(cond, what, detail=''):
    global n, failed
    n += 1
    print(('ok' if cond else 'not ok') + f' {n} - {what}')
    if not cond:
        failed = True
        for line in str(detail).splitlines()[:20]:
            print('#   ' + line)
    sys.stdout.flush()
    return cond


class Session:
    """`hanzo mcp ARGS` with pipes; send() and recv() one message per line."""

    def __init__(self, *args, env=None):
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([HANZO, 'mcp', *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.err, env=env)
        self.buf = b''
        self.next_id = 100

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode() + b'\n')

    def recv_line(self, timeout=60):
        end = time.monotonic() + timeout
        while b'\n' not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError('no reply within %d s' % timeout)
            r, _, _ = select.select([self.proc.stdout], [], [], left)
            if r:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise EOFError('hanzo mcp closed stdout: ' + self.stderr())
                self.buf += chunk
        line, self.buf = self.buf.split(b'\n', 1)
        return line

    def recv(self, timeout=60):
        return json.loads(self.recv_line(timeout))

    def request(self, method, params=None, timeout=60):
        self.next_id += 1
        msg = {'jsonrpc': '2.0', 'id': self.next_id, 'method': method}
        if params is not None:
            msg['params'] = params
        self.send(msg)
        reply = self.recv(timeout)
        assert reply.get('id') == self.next_id, reply
        return reply

    def call(self, tool, args, timeout=120):
        return self.request('tools/call', {'name': tool, 'arguments': args}, timeout)

    def initialize(self, version='2025-06-18'):
        r = self.request('initialize', {'protocolVersion': version, 'capabilities': {},
                                        'clientInfo': {'name': 'test-mcp-stdio', 'version': '1'}})
        self.send({'jsonrpc': '2.0', 'method': 'notifications/initialized'})
        return r

    def silent_then_ping(self):
        """TRUE when nothing was answered before the ping sent now."""
        r = self.request('ping')
        return r.get('result') == {}

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode(errors='replace')

    def close(self):
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        code = self.proc.wait(timeout=60)
        return code, self.buf + rest


def code_of(reply):
    return reply.get('error', {}).get('code')


def structured(reply):
    return reply['result'].get('structuredContent')


def main():
    if not os.path.isfile(MODEL):
        print(f'1..0 # SKIP shared test data not found: {MODEL} (set HZ_SHARED_DIR)')
        return 0
    tmp = tempfile.mkdtemp(prefix='hz-mcp-')
    store = os.path.join(tmp, 'hanzo.db')
    subprocess.run([MAKE_STORE, store], check=True)
    with open(store, 'rb') as f:
        store_sha = hashlib.sha256(f.read()).hexdigest()
    store_mtime = os.stat(store).st_mtime_ns
    env = dict(os.environ, XDG_DATA_HOME=os.path.join(tmp, 'data'))

    s = Session('-m', MODEL, '--store', store, '--threads', '1', '--max-message', '4096', env=env)

    # --- the handshake
    r = s.request('ping')
    ok(r.get('result') == {}, 'ping before initialize answers {}', r)
    r = s.request('tools/list')
    ok(code_of(r) == -32600, 'tools/list before initialize: -32600', r)
    r = s.initialize('2025-06-18')
    res = r.get('result', {})
    ok(res.get('protocolVersion') == '2025-06-18' and res.get('serverInfo', {}).get('name') == 'hanzo'
       and res.get('capabilities', {}).get('tools') == {'listChanged': False}
       and res.get('serverInfo', {}).get('title') == 'Hanzo Desktop',
       'initialize 2025-06-18: same version, serverInfo, tools capability', r)
    ok(s.silent_then_ping(), 'notifications/initialized is not answered')
    r = s.request('initialize', {'protocolVersion': '2025-06-18', 'capabilities': {},
                                 'clientInfo': {'name': 'x', 'version': '1'}})
    ok(code_of(r) == -32600, 'a second initialize: -32600', r)

    # --- tools/list
    r = s.request('tools/list')
    tools = {t['name']: t for t in r['result']['tools']}
    ok(sorted(tools) == ['chat', 'redact', 'search_conversations'] and
       all(t['inputSchema']['type'] == 'object' and t['outputSchema']['type'] == 'object' and
           t['description'] and t['title'] and t['annotations']['readOnlyHint'] is True and
           t['annotations']['openWorldHint'] is False for t in tools.values()),
       'tools/list: chat, redact, search_conversations with schemas, titles, annotations', r)
    ok(tools['chat']['inputSchema']['properties']['messages']['items']['properties']['role']['enum']
       == ['system', 'user', 'assistant'] and tools['redact']['inputSchema']['required'] == ['text']
       and tools['search_conversations']['inputSchema']['required'] == ['query'],
       'the input schemas name their members and requirements')
    r = s.request('tools/list', {'cursor': 'abc'})
    ok(code_of(r) == -32602, 'tools/list with an unknown cursor: -32602', r)

    # --- chat
    gen = subprocess.run([HANZO, 'generate', '-m', MODEL, '-p', 'Once upon a time', '-n', '24',
                          '--threads', '1'], capture_output=True, text=True, check=True).stdout
    gen = gen[:-1] if gen.endswith('\n') else gen   # (generate ends its output with a newline)
    r = s.call('chat', {'prompt': 'Once upon a time', 'max_tokens': 24, 'temperature': 0})
    c = structured(r)
    ok(c and c['text'] == gen and c['finish_reason'] == 'length' and c['completion_tokens'] == 24
       and c['prompt_tokens'] == 5 and c['dropped_messages'] == 0 and r['result']['isError'] is False
       and json.loads(r['result']['content'][0]['text']) == c,
       'chat (greedy, prompt) equals `hanzo generate` on stories260K; content holds the same JSON',
       f'{r}\ngenerate: {gen!r}')
    msgs = [{'role': 'user', 'content': 'Lily had a red ball.'},
            {'role': 'assistant', 'content': 'She played with it.'},
            {'role': 'user', 'content': 'Then the ball'}]
    a = structured(s.call('chat', {'messages': msgs, 'max_tokens': 16, 'temperature': 0.9, 'seed': 7}))
    b = structured(s.call('chat', {'messages': msgs, 'max_tokens': 16, 'temperature': 0.9, 'seed': 7}))
    ok(a and b and a['text'] == b['text'] and a['text'] and a['completion_tokens'] <= 16,
       'chat with messages and a seed: the same reply twice', f'{a}\n{b}')
    s.send({'jsonrpc': '2.0', 'id': 'prog', 'method': 'tools/call',
            'params': {'name': 'chat', '_meta': {'progressToken': 77},
                       'arguments': {'prompt': 'Once upon a time', 'max_tokens': 40, 'temperature': 0}}})
    notes = []
    while True:
        m = s.recv()
        if m.get('method') != 'notifications/progress':
            break
        notes.append(m['params'])
    ok(m.get('id') == 'prog' and structured(m)['completion_tokens'] == 40 and
       [x['progress'] for x in notes] == [1, 17, 33] and
       all(x['progressToken'] == 77 and x['total'] == 40 for x in notes),
       'chat with a progressToken: notifications/progress at tokens 1, 17, 33 of 40, then the result',
       f'{notes}\n{m}')

    # --- notifications/cancelled: a call cancelled before it runs (the three lines in one
    # write: the reader sees the cancel at once) is never answered; the ping after it is
    s.send_raw(json.dumps({'jsonrpc': '2.0', 'id': 'cx', 'method': 'tools/call',
                           'params': {'name': 'chat', 'arguments': {'prompt': 'Once upon a time',
                                                                    'max_tokens': 100}}}).encode()
               + b'\n' + json.dumps({'jsonrpc': '2.0', 'method': 'notifications/cancelled',
                                     'params': {'requestId': 'cx', 'reason': 'test'}}).encode()
               + b'\n' + json.dumps({'jsonrpc': '2.0', 'id': 'p1', 'method': 'ping'}).encode() + b'\n')
    m = s.recv()
    ok(m.get('id') == 'p1' and s.silent_then_ping(),
       'notifications/cancelled of a queued chat call: no response for it, the ping answered', m)
    s.send({'jsonrpc': '2.0', 'method': 'notifications/cancelled', 'params': {'requestId': 12345}})
    ok(s.silent_then_ping(), 'notifications/cancelled of an unknown request: nothing happens')
    r = s.call('chat', {'prompt': 'x', 'messages': msgs})
    ok(code_of(r) == -32602 and 'either' in r['error']['message'], 'chat with prompt and messages: -32602', r)
    r = s.call('chat', {'messages': [{'role': 'wizard', 'content': 'hi'}]})
    ok(code_of(r) == -32602 and 'arguments.messages[0].role' in r['error']['message'],
       'chat with an unknown role: -32602 naming arguments.messages[0].role', r)
    r = s.call('chat', {'prompt': 'x', 'max_tokens': 5000})
    ok(code_of(r) == -32602 and 'max_tokens' in r['error']['message'], 'chat max_tokens 5000: -32602', r)
    r = s.call('chat', {'prompt': 'x', 'top_q': 1})
    ok(code_of(r) == -32602 and 'top_q' in r['error']['message'], 'chat with an unknown member: -32602', r)

    # --- redact
    text = 'Mail Anna Schmidt at anna.schmidt@example.org or call +1 415 555 0132 today.'
    r = s.call('redact', {'text': text})
    c = structured(r)
    ok(c and 'anna.schmidt@example.org' not in c['text'] and 'Anna Schmidt' not in c['text']
       and '555 0132' not in c['text'] and '[EMAIL_1]' in c['text'] and '[PERSON_1]' in c['text']
       and c['text'].startswith('Mail ') and c['text'].endswith(' today.')
       and {e['type'] for e in c['entities']} >= {'PERSON', 'EMAIL', 'PHONE'}
       and all(text[e['start']:e['end']] for e in c['entities']),
       'redact (numbered): name, e-mail and phone replaced, the rest kept, entities with places', r)
    email = next((e for e in (c or {}).get('entities', []) if e['type'] == 'EMAIL'), None)
    ok(email and text[email['start']:email['end']] == 'anna.schmidt@example.org',
       'redact: the EMAIL entity points at the address in the input (code points)', c)
    c = structured(s.call('redact', {'text': text, 'mode': 'mask'}))
    ok(c and '[EMAIL]' in c['text'] and '[PERSON]' in c['text'], 'redact mode mask', c)
    c = structured(s.call('redact', {'text': text, 'mode': 'pseudonym'}))
    ok(c and 'anna.schmidt@example.org' not in c['text'] and '[' not in c['text'] and '@' in c['text'],
       'redact mode pseudonym: realistic fakes', c)
    r = s.call('redact', {'text': text, 'mode': 'blur'})
    ok(code_of(r) == -32602 and 'mask, numbered, pseudonym' in r['error']['message'],
       'redact with an unknown mode: -32602 listing the modes', r)
    r = s.call('redact', {})
    ok(code_of(r) == -32602 and '"text" is required' in r['error']['message'], 'redact without text: -32602', r)

    # --- search_conversations
    r = s.call('search_conversations', {'query': 'walrus'})
    c = structured(r)
    blob = json.dumps(c)
    ok(c and len(c['results']) == 2 and {x['role'] for x in c['results']} == {'user', 'assistant'}
       and all(x['conversation_title'] == 'Trip with [PERSON_1]' for x in c['results'])
       and 'Maria' not in blob and 'Lopez' not in blob and 'maria.lopez' not in blob
       and '555 0199' not in blob and all('[PERSON_1]' in x['text'] for x in c['results'])
       and any('[EMAIL_1]' in x['text'] and '[PHONE_1]' in x['text'] for x in c['results'])
       and all('walrus' in x['text'] for x in c['results']),
       'search_conversations "walrus": both messages, names/e-mail/phone redacted, one number per name', r)
    c = structured(s.call('search_conversations', {'query': 'walrus', 'limit': 1}))
    ok(c and len(c['results']) == 1, 'search_conversations limit 1', c)
    c = structured(s.call('search_conversations', {'query': 'chee'}))
    ok(c and len(c['results']) == 1 and c['results'][0]['conversation_title'] == 'Groceries'
       and c['results'][0]['text'] == 'Apples, bread and cheese for the weekend.'
       and c['results'][0]['truncated'] is False and c['results'][0]['created'].endswith('Z'),
       'search_conversations prefix "chee": the groceries message, text as stored', c)
    c = structured(s.call('search_conversations', {'query': 'zeppelin'}))
    ok(c == {'results': []}, 'search_conversations with no match: no results', c)
    r = s.call('search_conversations', {'query': ''})
    ok(code_of(r) == -32602, 'search_conversations with an empty query: -32602', r)
    r = s.call('search_conversations', {'query': 'walrus', 'limit': 51})
    ok(code_of(r) == -32602, 'search_conversations limit 51: -32602', r)

    # --- JSON-RPC errors
    def raw(data):
        s.send_raw(data + b'\n')
        return s.recv()
    r = raw(b'{"jsonrpc": "2.0", "id": 1, "method": ')
    ok(code_of(r) == -32700 and r['id'] is None, 'truncated JSON: -32700 with id null', r)
    r = raw(b'{"jsonrpc": "2.0", "id": 1, "method": "ping\xff"}')
    ok(code_of(r) == -32700, 'bytes that are not UTF-8: -32700', r)
    r = raw(b'{"jsonrpc": "2.0", "id": 1, "method": "\\ud83]"}')
    ok(code_of(r) == -32700 and 'parse error' in r['error']['message'],
       'a bad escape: -32700, the message valid UTF-8 (found by fuzz-mcp-message)', r)
    r = raw(b'{"jsonrpc":"2.0","id":"nul-1","method":"tools/call","params":{"name":"redact",'
            b'"arguments":{"text":"Hi\\u0000 mail john@example.com"}}}')
    ok(code_of(r) == -32600 and r['id'] == 'nul-1' and 'U+0000' in r['error']['message'],
       'a \\u0000 escape: -32600 with the id (json-glib would cut the text there: '
       'redact answered "Hi" alone)', r)
    r = raw(b'{"jsonrpc":"2.0","id":"nul-2","method":"tools/call","params":{"name":"redact",'
            b'"arguments":{"text":"Hi\\\\u0000 mail john@example.com"}}}')
    ok('result' in r and structured(r)['text'].startswith('Hi\\u0000 mail ')
       and 'john@' not in structured(r)['text'],
       'an escaped backslash before u0000 is text: redacted whole', r)
    r = raw(b'{"id": 3, "method": "ping"}')
    ok(code_of(r) == -32600 and r['id'] == 3, 'no "jsonrpc": -32600 with the id', r)
    r = raw(b'{"jsonrpc": "2.0", "id": null, "method": "ping"}')
    ok(code_of(r) == -32600 and r['id'] is None, 'id null: -32600', r)
    r = raw(b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}')
    ok(code_of(r) == -32600, 'a fractional id: -32600', r)
    r = raw(b'{"jsonrpc": "2.0", "id": "s-1", "method": 42}')
    ok(code_of(r) == -32600 and r['id'] == 's-1', 'a method that is not a string: -32600 with the string id', r)
    r = raw(b'{"jsonrpc": "2.0", "id": 4, "method": "ping", "params": "x"}')
    ok(code_of(r) == -32600, 'params a string: -32600', r)
    r = raw(b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": [1]}')
    ok(code_of(r) == -32602 and r['id'] == 5, 'params an array: -32602', r)
    r = raw(b'[' * 40 + b']' * 40)
    ok(code_of(r) == -32600 and 'deeper' in r['error']['message'], 'nesting 40 deep: -32600', r)
    deep = b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"redact","arguments":{"text":"a","x":' + b'[' * 28 + b']' * 28 + b'}}}'
    r = raw(deep)
    ok(code_of(r) == -32602, 'nesting 31 deep parses (then the unknown member is refused: -32602)', r)
    r = raw(b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"' + b'x' * 5000 + b'"}}')
    ok(code_of(r) == -32600 and r['id'] is None and 'longer than 4096' in r['error']['message'],
       'a line over --max-message: -32600', r)
    ok(s.silent_then_ping(), 'the server reads on after the long line')
    r = raw(b'[{"jsonrpc":"2.0","id":8,"method":"ping"}]')
    ok(code_of(r) == -32600 and 'batches' in r['error']['message'], 'a batch in 2025-06-18: -32600', r)
    r = raw(b'[]')
    ok(code_of(r) == -32600, 'an empty array: -32600', r)
    r = s.request('resources/list')
    ok(code_of(r) == -32601, 'an unknown method: -32601', r)
    r = s.request('tools/call', {'name': 'translate', 'arguments': {}})
    ok(code_of(r) == -32602 and 'unknown tool' in r['error']['message'], 'an unknown tool: -32602', r)
    r = s.request('tools/call', {'arguments': {}})
    ok(code_of(r) == -32602, 'tools/call without a name: -32602', r)
    r = s.request('tools/call', {'name': 'redact', 'arguments': 'text'})
    ok(code_of(r) == -32602, 'tools/call with arguments a string: -32602', r)
    s.send({'jsonrpc': '2.0', 'method': 'notifications/cancelled', 'params': {'requestId': 1}})
    s.send({'jsonrpc': '2.0', 'method': 'notifications/whatever'})
    s.send({'jsonrpc': '2.0', 'id': 99, 'result': {}})
    s.send_raw(b'\n  \r\n')
    ok(s.silent_then_ping(), 'notifications, a client response and blank lines are not answered')

    # --- the process: no socket, stdout only protocol lines, exit 0 at the end of stdin
    fds = os.listdir(f'/proc/{s.proc.pid}/fd')
    links = [os.readlink(f'/proc/{s.proc.pid}/fd/{fd}') for fd in fds]
    ok(links and not [l for l in links if l.startswith('socket:')],
       f'no socket among the process\'s {len(links)} descriptors', links)
    code, rest = s.close()
    lines = [l for l in rest.split(b'\n') if l]
    ok(code == 0 and not lines, 'exit 0 at the end of stdin, nothing else on stdout', f'{code} {rest[:300]!r}\n{s.stderr()}')
    ok('stories260K' in s.stderr() and 'read-only' in s.stderr(), 'the start line on stderr', s.stderr())
    with open(store, 'rb') as f:
        ok(hashlib.sha256(f.read()).hexdigest() == store_sha and os.stat(store).st_mtime_ns == store_mtime,
           'the store file is unchanged (bytes and mtime)')

    # --- a model that cannot be loaded: refused at start, nothing on stdout
    p = subprocess.run([HANZO, 'mcp', '-m', os.path.join(tmp, 'missing.gguf')], input=b'',
                       capture_output=True, env=env)
    ok(p.returncode == 1 and p.stdout == b'' and b"cannot load model" in p.stderr,
       'a model that cannot be loaded: exit 1, the reason on stderr, nothing on stdout', p)

    # --- versions
    s = Session('--store', os.path.join(tmp, 'none.db'), env=env)
    r = s.initialize('2099-01-01')
    ok(r['result']['protocolVersion'] == '2025-11-25', 'an unknown version is answered with the newest (2025-11-25)', r)
    r = s.request('tools/list')
    ok(sorted(t['name'] for t in r['result']['tools']) == ['redact', 'search_conversations'],
       'without -m: no chat tool', r)
    r = s.call('chat', {'prompt': 'x'})
    ok(code_of(r) == -32602 and '-m MODEL' in r['error']['message'], 'chat without a model: -32602 saying -m', r)
    r = s.call('redact', {'text': 'x', 'mode': 'blur'})
    ok(r.get('result', {}).get('isError') is True and 'mode' in r['result']['content'][0]['text'],
       '2025-11-25: bad arguments are a tool result with isError', r)
    r = s.call('search_conversations', {'query': 'walrus'})
    ok(r.get('result', {}).get('isError') is True and 'no conversations' in r['result']['content'][0]['text'],
       'search_conversations without a store: isError, nothing created', r)
    ok(not os.path.exists(os.path.join(tmp, 'none.db')), 'no store file was created')
    ok(s.close()[0] == 0, 'exit 0')

    s = Session('--store', store, env=env)
    r = s.initialize('2024-11-05')
    ok(r['result']['protocolVersion'] == '2024-11-05' and 'title' not in r['result']['serverInfo'],
       'initialize 2024-11-05: that version, no serverInfo title', r)
    r = s.request('tools/list')
    t = r['result']['tools'][0]
    ok('outputSchema' not in t and 'title' not in t and 'annotations' not in t,
       '2024-11-05: tools without outputSchema, title, annotations', t)
    r = s.call('redact', {'text': 'mail bob@example.com'})
    ok('structuredContent' not in r['result'] and
       json.loads(r['result']['content'][0]['text'])['text'] == 'mail [EMAIL_1]',
       '2024-11-05: the result as JSON text, no structuredContent', r)
    s.close()

    s = Session('--store', store, env=env)
    r = s.initialize('2025-03-26')
    ok(r['result']['protocolVersion'] == '2025-03-26', 'initialize 2025-03-26', r)
    s.send_raw(b'[{"jsonrpc":"2.0","id":"a","method":"ping"},'
               b'{"jsonrpc":"2.0","method":"notifications/x"},'
               b'{"jsonrpc":"2.0","id":"b","method":"nope"},'
               b'{"jsonrpc":"2.0","id":"c","method":"initialize","params":{"protocolVersion":"2025-03-26"}},'
               b'[1]]\n')
    r = s.recv()
    ok(isinstance(r, list) and [x.get('id') for x in r] == ['a', 'b', 'c', None]
       and r[0].get('result') == {} and code_of(r[1]) == -32601 and code_of(r[2]) == -32600
       and code_of(r[3]) == -32600,
       '2025-03-26: a batch answered as an array (ping, -32601, initialize in a batch -32600, a nested array -32600; the notification unanswered)', r)
    s.send_raw(b'[{"jsonrpc":"2.0","method":"notifications/x"}]\n')
    ok(s.silent_then_ping(), '2025-03-26: a batch of notifications is not answered')
    s.close()

    # --- notifications/cancelled while a chat call runs: stories-distill (context 512), a
    # greedy reply of 400 tokens (25 progress notifications at full length) cancelled after
    # its first token's notification; then the model answers on
    distill = os.path.join(SHARED, 'models', 'stories-distill', 'stories-distill-Q8_0.gguf')
    if not os.path.isfile(distill):
        ok(True, f'a running chat call cancelled # SKIP {distill} not found')
    else:
        s = Session('-m', distill, '--threads', '1', '--store', store, env=env)
        s.initialize('2025-06-18')
        args = {'prompt': 'Once upon a time', 'max_tokens': 400, 'temperature': 0}
        s.send({'jsonrpc': '2.0', 'id': 'long', 'method': 'tools/call',
                'params': {'name': 'chat', '_meta': {'progressToken': 'L'}, 'arguments': args}})
        first = s.recv()
        t0 = time.monotonic()
        s.send({'jsonrpc': '2.0', 'method': 'notifications/cancelled',
                'params': {'requestId': 'long', 'reason': 'the user pressed stop'}})
        s.send({'jsonrpc': '2.0', 'id': 'after', 'method': 'ping'})
        notes, m = [first], None
        while True:
            m = s.recv()
            if m.get('method') != 'notifications/progress':
                break
            notes.append(m)
        waited = time.monotonic() - t0
        ok(first.get('method') == 'notifications/progress' and m.get('id') == 'after' and
           len(notes) < 10 and s.silent_then_ping(),
           'a running chat call cancelled: no response for it, at most a few progress '
           'notifications after the cancel, the ping answered',
           f'{first}\n{m}\n{len(notes)} notifications, {waited:.3f} s')
        print(f'# cancelled after {len(notes)} of 25 progress notifications; the ping answered '
              f'{waited * 1000:.0f} ms after the cancel')
        a = structured(s.call('chat', {'prompt': 'Once upon a time', 'max_tokens': 8, 'temperature': 0}))
        b = structured(s.call('chat', {'prompt': 'Once upon a time', 'max_tokens': 8, 'temperature': 0}))
        ok(a and b and a['text'] == b['text'] and a['completion_tokens'] == 8,
           'after the cancelled call the model answers on (greedy, the same twice)', f'{a}\n{b}')
        ok(s.close()[0] == 0, 'exit 0')

    print(f'1..{n}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
