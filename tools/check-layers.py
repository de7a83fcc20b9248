#!/usr/bin/env python3
"""check-layers.py — finds include and call loops between the files of a source folder.

Usage: tools/check-layers.py [--floors] [--sizes] [--self-test] BUILD_DIR FOLDER [FOLDER...]

For each FOLDER (relative to the source root, e.g. "redactor"), every file is a node: a
.c file and the .h of the same name are one node ("redactor/hz-scan"); a header with no .c
of its name is a node of its own ("redactor/hanzo/redact"). There is an arrow A -> B when
  - a file of A #includes "..." a header of B (resolved next to the including file, then
    from the folder's root), or
  - A's object file needs a symbol that B's object file defines (`nm -P`: A's undefined
    symbols against B's global defined ones; functions and data alike).
Objects are found through BUILD_DIR/compile_commands.json (so the folder must be built);
of a file compiled for several targets, the object built under BUILD_DIR/FOLDER is taken.
Arrows to files outside FOLDER are not looked at here (issue 26 item 7: a table of what
each folder may touch).

The folder passes when its graph has no cycle (no strongly connected component of two or
more nodes); then every file has a floor (0: uses no other file of the folder; else one
above the highest file it uses) and every arrow runs down. On a cycle, prints each loop's
files and the arrows that close it (with the symbols or the include line behind each), and
exits 1. --floors prints every file's floor and what it uses. --sizes adds the folder's
number of .c/.h files, its largest file and its largest function, in lines (a function runs
from its "{" in column 0 to the next "}" in column 0, the house's GNU style). --self-test
first checks the loop finder and the floors on small graphs with known answers.
"""

import json
import os
import re
import subprocess
import sys
from collections import defaultdict

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def node_of(rel):
    """'redactor/hz-scan.c' and 'redactor/hz-scan.h' -> 'redactor/hz-scan'."""
    return os.path.splitext(rel)[0]


def folder_files(src, folder):
    out = []
    for root, _dirs, files in os.walk(os.path.join(src, folder)):
        for f in files:
            if f.endswith(('.c', '.h')):
                out.append(os.path.relpath(os.path.join(root, f), src))
    return sorted(out)


def objects(build, src, folder):
    """source path relative to src -> its object file (first compile command of it)."""
    with open(os.path.join(build, 'compile_commands.json')) as fh:
        cmds = json.load(fh)
    out = {}
    prefix = os.path.join(src, folder) + os.sep
    own = os.path.join(os.path.abspath(build), folder) + os.sep
    for c in cmds:
        path = os.path.normpath(os.path.join(c['directory'], c['file']))
        if not path.startswith(prefix):
            continue
        rel = os.path.relpath(path, src)
        obj = c.get('output')
        if obj is None:
            m = re.search(r'-o\s+(\S+)', c.get('command', ''))
            obj = m.group(1) if m else None
        if obj is None:
            continue
        obj = os.path.normpath(os.path.join(c['directory'], obj))
        # a file built for the folder's own target and for another (a tool that compiles it
        # again) counts as the folder's own object
        if rel not in out or (obj.startswith(own) and not out[rel].startswith(own)):
            out[rel] = obj
    return out


def nm(objs):
    """object -> (defined global symbols, undefined symbols), from one run of nm."""
    res = subprocess.run(['nm', '-P', '-A'] + sorted(objs), capture_output=True, text=True,
                         check=True)
    out = {o: (set(), set()) for o in objs}
    for line in res.stdout.splitlines():
        # "path/obj.o: name type [value size]"
        head, sep, rest = line.partition(': ')
        parts = rest.split()
        if not sep or len(parts) < 2 or head not in out:
            continue
        name, kind = parts[0], parts[1]
        if kind == 'U':
            out[head][1].add(name)
        elif (kind.isupper() and kind != 'N') or kind in 'vVwW':
            out[head][0].add(name)
    return out


def graph(build, src, folder):
    files = folder_files(src, folder)
    nodes = {node_of(f) for f in files}
    edges = defaultdict(dict)  # a -> b -> reason

    for f in files:
        with open(os.path.join(src, f), encoding='utf-8', errors='replace') as fh:
            text = fh.read()
        for inc in INCLUDE_RE.findall(text):
            for base in (os.path.dirname(f), folder):
                cand = os.path.normpath(os.path.join(base, inc))
                if os.path.isfile(os.path.join(src, cand)):
                    break
            else:
                continue
            if not cand.startswith(folder + os.sep):
                continue
            a, b = node_of(f), node_of(cand)
            if a != b:
                edges[a].setdefault(b, '#include "%s" in %s' % (inc, os.path.basename(f)))

    objs = objects(build, src, folder)
    for f, o in objs.items():
        if not os.path.exists(o):
            sys.exit('check-layers: %s is not built (%s); build the folder first' % (f, o))
    symbols = nm(objs.values()) if objs else {}
    defined = {}
    for f, o in objs.items():
        for s in symbols[o][0]:
            defined.setdefault(s, node_of(f))
    for f, o in objs.items():
        a = node_of(f)
        used = defaultdict(list)
        for s in symbols[o][1]:
            b = defined.get(s)
            if b and b != a:
                used[b].append(s)
        for b, syms in used.items():
            syms.sort()
            more = ' ...' if len(syms) > 4 else ''
            reason = 'calls ' + ', '.join(syms[:4]) + more
            prev = edges[a].get(b)
            edges[a][b] = reason if prev is None else prev + '; ' + reason
    return nodes, edges


def sccs(nodes, edges):
    """Tarjan's strongly connected components, iterative."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, {}))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def floors(nodes, edges):
    memo = {}

    def floor(v):
        if v not in memo:
            memo[v] = 0
            memo[v] = 1 + max((floor(w) for w in edges.get(v, {})), default=-1)
        return memo[v]

    return {v: floor(v) for v in nodes}


def sizes(src, folder):
    """(files, (lines, file), (lines, function)) of the .c/.h files of folder."""
    files = folder_files(src, folder)
    big_file, big_fn = (0, ''), (0, '')
    for f in files:
        with open(os.path.join(src, f), encoding='utf-8', errors='replace') as fh:
            lines = fh.read().split('\n')
        if lines and lines[-1] == '':
            lines.pop()
        big_file = max(big_file, (len(lines), f))
        start = None
        for i, line in enumerate(lines):
            if line.startswith('{'):
                start = i
            elif line.startswith('}') and start is not None:
                name = '?'
                for k in range(start - 1, max(start - 12, -1), -1):
                    m = re.match(r'([A-Za-z_]\w*)\s*\(', lines[k])
                    if m:
                        name = m.group(1)
                        break
                big_fn = max(big_fn, (i - start + 2, '%s (%s)' % (name, os.path.basename(f))))
                start = None
    return len(files), big_file, big_fn


def self_test():
    """The loop finder and the floors on graphs with known answers; raises on a mistake."""
    nodes = {'a', 'b', 'c', 'd', 'e'}
    edges = {'a': {'b': ''}, 'b': {'c': ''}, 'c': {'a': ''}, 'd': {'a': ''}, 'e': {'e': ''}}
    loops = sorted(c for c in sccs(nodes, edges) if len(c) > 1)
    assert loops == [['a', 'b', 'c']], loops
    dag = {'top': {'mid': '', 'low': ''}, 'mid': {'low': ''}}
    fl = floors({'top', 'mid', 'low', 'alone'}, dag)
    assert fl == {'top': 2, 'mid': 1, 'low': 0, 'alone': 0}, fl
    assert node_of('redactor/hz-scan.c') == node_of('redactor/hz-scan.h') == 'redactor/hz-scan'
    print('self-test: a 3-file loop found, floors of a 3-floor graph right')


def main(argv):
    show = '--floors' in argv
    show_sizes = '--sizes' in argv
    if '--self-test' in argv:
        self_test()
    args = [a for a in argv if a not in ('--floors', '--sizes', '--self-test')]
    if len(args) < 2:
        sys.exit(__doc__)
    build = os.path.abspath(args[0])
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bad = 0
    for folder in args[1:]:
        folder = folder.rstrip('/')
        if show_sizes:
            n, (fl_n, fl), (fn_n, fn) = sizes(src, folder)
            print('%s: %d files; largest file %s, %d lines; largest function %s, %d lines' %
                  (folder, n, fl, fl_n, fn, fn_n))
        nodes, edges = graph(build, src, folder)
        n_edges = sum(len(v) for v in edges.values())
        loops = [c for c in sccs(nodes, edges) if len(c) > 1]
        if loops:
            bad += 1
            for comp in loops:
                print('%s: loop between %d files: %s' % (folder, len(comp), ' '.join(comp)))
                inside = set(comp)
                for a in comp:
                    for b, why in sorted(edges.get(a, {}).items()):
                        if b in inside:
                            print('  %s -> %s  (%s)' % (a, b, why))
            continue
        fl = floors(nodes, edges)
        print('%s: %d files, %d arrows, %d floors, no loop' %
              (folder, len(nodes), n_edges, max(fl.values()) + 1 if fl else 0))
        if show:
            for v in sorted(nodes, key=lambda v: (fl[v], v)):
                uses = ' '.join(sorted(os.path.basename(w) for w in edges.get(v, {})))
                print('  %d %-36s %s' % (fl[v], v, uses))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
