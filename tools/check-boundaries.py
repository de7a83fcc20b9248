#!/usr/bin/env python3
"""check-boundaries.py — the arrows between the project's folders against tools/boundaries.txt.

Usage: tools/check-boundaries.py [--list] BUILD_DIR

Issue 26 item 7: ARCHITECTURE.md's table of what each folder may touch, as a test. For every
source file of the checked folders (those named in boundaries.txt), an arrow A -> B is
  - an `#include "..."` or `#include <...>` that resolves to a file of folder B (looked up
    next to the including file, in its own folder's root, then in the include directories the
    libraries export: each folder's root, engine/quant and engine/jinja), or
  - a symbol A's object files need that an object file of B defines (`nm -P`, as
    tools/check-layers.py reads them; objects found through BUILD_DIR/compile_commands.json).

Fails (exit 1), naming the file and the include or the symbols, on
  - an arrow to a folder that `may A:` does not list (unless every include behind it is a
    listed `debt` and no symbol is used),
  - an include of another folder's header that is not on that folder's `face` and not a
    listed `debt`,
  - a listed `debt` that no longer occurs (delete its line: the list only shrinks),
  - a global symbol defined in two folders (two functions of one name).
--list prints every arrow with its includes and the number of symbols.
"""
import collections
import fnmatch
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)
EXPORTED = ['engine/quant', 'engine/jinja']  # besides each folder's root


def load_check_layers():
    spec = importlib.util.spec_from_file_location('check_layers',
                                                  os.path.join(HERE, 'check-layers.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def read_table(path):
    may, face, debt = {}, collections.defaultdict(list), {}
    with open(path, encoding='utf-8') as fh:
        for n, raw in enumerate(fh, 1):
            line = raw.split('#', 1)[0].strip()
            if not line:
                continue
            kind, _, rest = line.partition(' ')
            if kind == 'debt':
                a, arrow, header = rest.partition('->')
                if not arrow:
                    sys.exit('%s:%d: "debt A -> HEADER" expected' % (path, n))
                debt[(a.strip(), header.strip())] = n
                continue
            folder, colon, others = rest.partition(':')
            if kind not in ('may', 'face') or not colon:
                sys.exit('%s:%d: "may A: ...", "face A: ..." or "debt A -> H" expected'
                         % (path, n))
            items = [o for o in others.split() if o != '-']
            if kind == 'may':
                may[folder.strip()] = set(items)
            else:
                face[folder.strip()] += items
    return may, face, debt


def on_face(header, faces):
    return any(fnmatch.fnmatchcase(header, f) or (f.endswith('/') and header.startswith(f))
               for f in faces)


def main(argv):
    listing = '--list' in argv
    args = [a for a in argv[1:] if a != '--list']
    if len(args) != 1:
        sys.exit(__doc__)
    build = os.path.abspath(args[0])
    src = os.path.dirname(HERE)
    cl = load_check_layers()
    may, face, debt = read_table(os.path.join(HERE, 'boundaries.txt'))
    folders = sorted(may)
    roots = folders + EXPORTED

    def folder_of(rel):
        return rel.split('/', 1)[0]

    includes = collections.defaultdict(lambda: collections.defaultdict(set))  # (a,b)->h->files
    for a in folders:
        for rel in cl.folder_files(src, a):
            with open(os.path.join(src, rel), encoding='utf-8', errors='replace') as fh:
                text = fh.read()
            for delim, inc in INCLUDE_RE.findall(text):
                bases = ([os.path.dirname(rel), a] if delim == '"' else []) + roots
                for base in bases:
                    cand = os.path.normpath(os.path.join(base, inc))
                    if os.path.isfile(os.path.join(src, cand)):
                        break
                else:
                    continue
                b = folder_of(cand)
                if b != a and b in may:
                    includes[(a, b)][cand].add(os.path.basename(rel))

    objs = {}
    for a in folders:
        for rel, obj in cl.objects(build, src, a).items():
            if os.path.exists(obj):
                objs[obj] = a
    symbols = cl.nm(list(objs)) if objs else {}
    defined = collections.defaultdict(set)
    for obj, a in objs.items():
        for s in symbols[obj][0]:
            defined[s].add(a)
    calls = collections.defaultdict(set)
    for obj, a in objs.items():
        for s in symbols[obj][1]:
            for b in defined.get(s, ()):
                if a not in defined[s]:
                    calls[(a, b)].add(s)

    errors = []
    for s, where in sorted(defined.items()):
        if len(where) > 1 and s != 'main' and not s.startswith(('_', '.')):
            errors.append('%s is defined in %s: one name, one function' % (s, ' and '.join(sorted(where))))
    seen_debt = set()
    for (a, b) in sorted(set(includes) | set(calls)):
        incs = includes.get((a, b), {})
        syms = sorted(calls.get((a, b), ()))
        if listing:
            print('%s -> %s: %d symbols; includes %s' % (a, b, len(syms),
                                                         ', '.join(sorted(incs)) or '-'))
        for h, files in sorted(incs.items()):
            if (a, h) in debt:
                seen_debt.add((a, h))
            elif not on_face(h, face.get(b, [])):
                errors.append('%s -> %s: %s includes %s, which is not on %s/\'s public face'
                              % (a, b, ', '.join(sorted(files)), h, b))
        if b not in may.get(a, set()):
            only_debt = syms == [] and incs and all((a, h) in debt for h in incs)
            if not only_debt:
                what = []
                if incs:
                    what.append('includes ' + ', '.join(sorted(incs)))
                if syms:
                    what.append('calls ' + ', '.join(syms[:6]) + (' ...' if len(syms) > 6 else ''))
                errors.append('%s -> %s: %s may not touch %s (%s)'
                              % (a, b, a, b, '; '.join(what)))
    for (a, h), n in sorted(debt.items(), key=lambda kv: kv[1]):
        if (a, h) not in seen_debt:
            errors.append('boundaries.txt:%d: debt %s -> %s no longer occurs: delete the line'
                          % (n, a, h))
    for e in errors:
        print(e)
    if errors:
        print('check-boundaries: %d problem(s)' % len(errors))
        return 1
    print('check-boundaries: %d folders, every arrow allowed; %d known includes past a face'
          % (len(folders), len(debt)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
