#!/usr/bin/env python3
"""bench-server-client.py — the client side of tools/bench-server.sh: C concurrent streaming
completions against OpenAI-compatible servers, timed.

Usage: bench-server-client.py MODEL CONC[,CONC...] LABEL=URL [LABEL=URL ...]
                              [--gen N] [--prompt-words N] [--repeat R]

For each concurrency C, C threads start together; each streams one POST /v1/completions
(temperature 0, max_tokens N, ignore_eos, stream_options.include_usage) with a prompt of its
own (the same story text after a first sentence that no other request of the run, or of an
earlier run, has: no server reuses a cached prompt), reads the server-sent events as they
come, and records the time to its first text (TTFT) and the time of its last event. The
servers take turns, run by run, R times (so that a machine shared with other work slows them
alike), and each row is the median of its R runs. One untimed request first warms each
server (model load, first allocations). Prints Markdown table rows:
| server | clients | aggregate tokens/s | tokens/s per client | TTFT median ms | TTFT max ms |
aggregate = all generated tokens / (last stream's end - start); per client = its tokens /
(its end - its first token), the median over clients. Tokens are the usage counts of the
final event when the server sends them (else max_tokens)."""

import http.client
import json
import statistics
import sys
import threading
import time
from urllib.parse import urlparse

STORY = ("Once upon a time there was a little girl named Lily. She loved to play in the park "
         "with her big red ball. One day she saw a small dog under a tree. The dog was sad "
         "because it had lost its way home.")


def one(url, model, prompt, gen, out, start):
    u = urlparse(url)
    start.wait()
    t0 = time.monotonic()
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    body = json.dumps({"model": model, "prompt": prompt, "max_tokens": gen, "temperature": 0,
                       "ignore_eos": True, "stream": True,
                       "stream_options": {"include_usage": True}})
    conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"{resp.status} {resp.read()[:300]!r}")
    first = None
    tokens = None
    for raw in resp:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        ev = json.loads(line[6:])
        if ev.get("usage"):
            tokens = ev["usage"].get("completion_tokens", tokens)
        for c in ev.get("choices") or []:
            if c.get("text") and first is None:
                first = time.monotonic()
    end = time.monotonic()
    conn.close()
    out.append({"t0": t0, "first": first or end, "end": end, "tokens": tokens or gen})


RUNS = [0]


def run(url, model, conc, gen, words):
    out, threads, start = [], [], threading.Event()
    RUNS[0] += 1
    for i in range(conc):
        prompt = f"Story {RUNS[0]}.{i + 1}. " + " ".join(STORY.split()[:words])
        t = threading.Thread(target=one, args=(url, model, prompt, gen, out, start))
        t.start()
        threads.append(t)
    t_start = time.monotonic()
    start.set()
    for t in threads:
        t.join()
    if len(out) != conc:
        raise RuntimeError(f"{conc - len(out)} of {conc} streams failed")
    total = sum(r["tokens"] for r in out)
    wall = max(r["end"] for r in out) - t_start
    ttft = [1000 * (r["first"] - r["t0"]) for r in out]
    per = [r["tokens"] / max(r["end"] - r["first"], 1e-9) for r in out]
    return total / wall, statistics.median(per), statistics.median(ttft), max(ttft)


def main():
    args = sys.argv[1:]
    opts = {"--gen": 128, "--prompt-words": 40, "--repeat": 3}
    for k in list(opts):
        if k in args:
            i = args.index(k)
            opts[k] = int(args[i + 1])
            del args[i:i + 2]
    model, concs, servers = args[0], args[1], [a.split("=", 1) for a in args[2:]]
    gen, words, repeat = opts["--gen"], opts["--prompt-words"], opts["--repeat"]
    for _, url in servers:
        run(url, model, 1, 8, words)   # warm-up: load, allocate
    for c in [int(x) for x in concs.split(",")]:
        rows = {label: [] for label, _ in servers}
        for _ in range(repeat):
            for label, url in servers:
                rows[label].append(run(url, model, c, gen, words))
        for label, _ in servers:
            agg, per, ttft_med, ttft_max = (statistics.median(col) for col in zip(*rows[label]))
            print(f"| {label} | {c} | {agg:,.0f} | {per:,.0f} | {ttft_med:,.1f} | {ttft_max:,.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
