#!/usr/bin/env python3
"""Jinja2 reference for the chat-template interpreter (engine/jinja/, issue 23).

    python3 tests/reference/jinja_reference.py tests/engine/jinja-cases.json
    python3 tests/reference/jinja_reference.py --templates ../shared/chat-templates/templates \
        tests/engine/jinja-fixtures tests/engine/jinja-templates.json

Each case of the file is {"t": TEMPLATE, "v": VARIABLES}; this script renders it as
Hugging Face transformers' apply_chat_template does (Jinja2 3.1's
ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and loop controls; tojson as
json.dumps(x, ensure_ascii=False, indent=..., separators=..., sort_keys=...); the globals
raise_exception and strftime_now) and writes the result back into the case: "out" (the
text) or "error" ("ExceptionClass: message", first line). strftime_now formats
$SOURCE_DATE_EPOCH (default 1796299200, 2026-12-03 12:00 UTC) in UTC, as the C side does
with the same variable. tests/engine/test-jinja.c renders every case with the C
interpreter and checks the text byte for byte, or the error's class and message.

With --templates, every real chat template of the folder is rendered with every fixture
of tests/engine/jinja-fixtures/ (thinking, content parts, tool calls with string
arguments, unicode and injected markup, an empty conversation, ...) and the result is kept
as the SHA-256 and length of the text, or the error: test-jinja.c checks its renderings
against them (../shared/chat-templates/golden holds the renderings of four other fixtures).
Made with Jinja2 3.1.6 (Debian 13's python3-jinja2).
"""
import json
import os
import sys
from datetime import datetime, timezone

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment


def make_env():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                          separators=separators, sort_keys=sort_keys)

    now = datetime.fromtimestamp(int(os.environ.get("SOURCE_DATE_EPOCH", "1796299200")),
                                 tz=timezone.utc).replace(tzinfo=None)

    def strftime_now(format):
        return now.strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def templates_mode(tdir, fdir, out_path):
    import glob
    import hashlib
    env = make_env()
    result = {}
    for t in sorted(glob.glob(os.path.join(tdir, "*.jinja"))):
        with open(t, encoding="utf-8") as f:
            src = f.read()
        name = os.path.basename(t)[: -len(".jinja")]
        result[name] = {}
        for fx in sorted(glob.glob(os.path.join(fdir, "*.json"))):
            with open(fx, encoding="utf-8") as f:
                variables = json.load(f)
            key = os.path.basename(fx)[: -len(".json")]
            try:
                text = env.from_string(src).render(**variables).encode("utf-8")
                result[name][key] = {"sha256": hashlib.sha256(text).hexdigest(), "len": len(text)}
            except Exception as e:  # the error is the expected result
                result[name][key] = {"error": type(e).__name__ + ": " + str(e).split("\n")[0]}
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")


def main():
    if sys.argv[1] == "--templates":
        templates_mode(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        cases = json.load(f)
    env = make_env()
    for case in cases:
        case.pop("out", None)
        case.pop("error", None)
        try:
            case["out"] = env.from_string(case["t"]).render(**case.get("v", {}))
        except Exception as e:  # the error is the expected result
            case["error"] = type(e).__name__ + ": " + str(e).split("\n")[0]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
