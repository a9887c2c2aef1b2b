#!/usr/bin/env python3
"""The module dependency edges of src/, read from the code (`./dev deps`), and the check that
ARCHITECTURE.md's list of them is true (`./dev deps --check`, run by CI).

Reads every `use` tree (braces, `as`, `self`, `super::`, `crate::`, `bufscope::`, and uniform
paths into child modules) and every `crate::`/`bufscope::`/`super::` path in code, outside
comments, strings and `#[cfg(test)]` modules; a path inside an inline `mod x { … }` is
read from `x`, and a visibility (`pub(in super::super)`) names nothing. Modules are folded to units: the core's
top-level modules (`parse`, `answers`, …) and the app's `ui/X` rooms (`ui` itself is
`src/ui/mod.rs`). An edge A → B means a file of A names something of B.

Also finds import cycles between sibling files (files of one folder naming each other,
directly or through other siblings); a child naming its parent module is not a cycle.

  deps.py            prints the edges, then the sibling cycles
  deps.py --check    exit 1 when the fenced `deps` block of ARCHITECTURE.md differs from
                     the edges, when the code breaks a rule of its fenced `rules` block
                     (dependency and naming rules, the forms below), or when there is
                     a sibling cycle
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rooms import blank_out, without_tests  # noqa: E402

ROOT = 'src'


def module_path(path):
    """src/ui/panels/answers.rs → ('ui', 'panels', 'answers'); lib.rs and main.rs → ()."""
    parts = os.path.relpath(path, ROOT)[:-3].split(os.sep)
    if parts in (['lib'], ['main']):
        return ()
    if parts[-1] == 'mod':
        parts = parts[:-1]
    return tuple(parts)


def use_trees(src):
    """The `use` declarations' trees as text (without `use` and `;`), each with its offset, and
    the source with them blanked out."""
    trees = []

    def take(m):
        trees.append((m.start(), m.group(2)))
        return re.sub(r'[^\n]', ' ', m.group(0))

    rest = re.sub(r'\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]*);', take, src)
    return trees, rest


def inline_modules(code):
    """The inline `mod name { … }` blocks of `code` (comments and strings blanked) as
    (start, end, name): paths inside one are relative to that module."""
    out = []
    for m in re.finditer(r'\bmod\s+(\w+)\s*\{', code):
        depth = 0
        for i in range(m.end() - 1, len(code)):
            if code[i] == '{':
                depth += 1
            elif code[i] == '}':
                depth -= 1
                if depth == 0:
                    out.append((m.end(), i, m.group(1)))
                    break
    return out


def expand(tree):
    """`a::{b, c::{d, e as f}, self}` → [['a','b'], ['a','c','d'], ['a','c','e'], ['a']]."""
    tree = re.sub(r'\s+', '', tree)
    out = []

    def walk(prefix, text):
        # Split text at top-level commas.
        depth, start, items = 0, 0, []
        for i, ch in enumerate(text):
            if ch == '{':
                depth += 1
            elif ch == '}':
                depth -= 1
            elif ch == ',' and depth == 0:
                items.append(text[start:i])
                start = i + 1
        items.append(text[start:])
        for item in items:
            if not item:
                continue
            brace = item.find('{')
            if brace >= 0 and item.endswith('}'):
                head = [s for s in item[:brace].split('::') if s]
                walk(prefix + head, item[brace + 1:-1])
            else:
                segs = [s for s in item.split('::') if s]
                if segs and segs[-1] == 'self':
                    segs = segs[:-1]
                out.append(prefix + segs)

    walk([], tree)
    return out


def split_as(tree):
    """Drops `as NAME` renames before whitespace is removed."""
    return re.sub(r'\s+as\s+\w+', '', tree)


class Crate:
    def __init__(self):
        self.files = {}
        for dp, _, fs in os.walk(ROOT):
            for f in fs:
                if f.endswith('.rs') and f != 'tests.rs' and not dp.endswith(os.sep + 'tests'):
                    p = os.path.join(dp, f)
                    self.files[p] = module_path(p)
        self.modules = set(self.files.values())
        self.reexports = self.root_reexports()

    def root_reexports(self):
        """Names lib.rs re-exports at the crate root, and the module path they come from."""
        src = without_tests(blank_out(open(os.path.join(ROOT, 'lib.rs')).read()))
        out = {}
        trees, _ = use_trees(src)
        for _, t in trees:
            for p in expand(split_as(t)):
                if len(p) > 1:
                    out[p[-1]] = tuple(p[:-1])
        return out

    def resolve(self, me, segs):
        """The module a path names from module `me`, or None (another crate, std)."""
        if not segs:
            return None
        if segs[0] in ('crate', 'bufscope'):
            path = tuple(segs[1:])
            if len(path) == 1 and path[0] in self.reexports:
                return self.reexports[path[0]]
        elif segs[0] == 'super':
            base = list(me)
            while segs and segs[0] == 'super':
                base = base[:-1]
                segs = segs[1:]
            path = tuple(base) + tuple(segs)
        elif segs[0] == 'self':
            path = tuple(me) + tuple(segs[1:])
        elif tuple(me) + (segs[0],) in self.modules:
            path = tuple(me) + tuple(segs)
        elif me == () and (segs[0],) in self.modules:
            path = tuple(segs)
        else:
            return None
        # The longest prefix that is a module.
        for n in range(len(path), -1, -1):
            if path[:n] in self.modules:
                return path[:n]
        return None

    def references(self, path):
        """The module paths file `path` names."""
        me = self.files[path]
        src = without_tests(blank_out(open(path, encoding='utf-8', errors='replace').read()))
        trees, code = use_trees(src)
        # A visibility (`pub(in super::super)`) names no item.
        code = re.sub(r'pub\(in [^)]*\)', lambda m: ' ' * len(m.group(0)), code)
        inline = inline_modules(code)

        def at(offset):
            """The module path in force at `offset` (inside inline `mod x { … }` blocks)."""
            return tuple(me) + tuple(n for a, b, n in inline if a <= offset < b)

        found = set()
        for offset, t in trees:
            for segs in expand(split_as(t)):
                target = self.resolve(at(offset), segs)
                if target is not None:
                    found.add(target)
        for m in re.finditer(r'\b((?:crate|bufscope|super|self)(?:::\w+)+)', code):
            target = self.resolve(at(m.start()), m.group(1).split('::'))
            if target is not None:
                found.add(target)
        # Uniform paths into child modules in code: `child::item`.
        for m in re.finditer(r'(?<![:\w])(\w+)::\w', code):
            child = tuple(me) + (m.group(1),)
            if child in self.modules:
                found.add(child)
        found.discard(me)
        return found


def unit(path):
    if not path:
        return 'root'
    if path[0] == 'ui' and len(path) > 1:
        return 'ui/' + path[1]
    return path[0]


def edges(crate):
    out = {}
    for p, me in crate.files.items():
        a = unit(me)
        for t in crate.references(p):
            b = unit(t)
            if b != a and b != 'root' and a != 'root':
                out.setdefault(a, set()).add(b)
    return out


def sibling_cycles(crate):
    """Strongly connected groups of sibling files (same parent module) naming each other."""
    graph = {}
    for p, me in crate.files.items():
        if not me:
            continue
        parent = me[:-1]
        for t in crate.references(p):
            # A sibling, or something inside a sibling.
            if len(t) > len(parent) and t[:len(parent)] == parent and t[:len(me)] != me:
                sib = t[:len(parent) + 1]
                if sib != me and sib in crate.modules:
                    graph.setdefault(me, set()).add(sib)
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted('::'.join(c) for c in comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sorted(comps)


def documented(text):
    """The edges in ARCHITECTURE.md's fenced ```deps block: one `A → B, C` per line."""
    m = re.search(r'```deps\n(.*?)```', text, re.S)
    if m is None:
        return None
    out = {}
    for line in m.group(1).splitlines():
        if '→' not in line:
            continue
        a, bs = line.split('→', 1)
        out[a.strip()] = {b.strip() for b in bs.split(',') if b.strip()}
    return out


def render(e):
    return [f"{a} → {', '.join(sorted(e[a]))}" for a in sorted(e)]


def check(e, cycles, text):
    """The differences between the code's edges and those of ARCHITECTURE.md's text, and the
    sibling cycles, as lines; none when the map is true."""
    doc = documented(text)
    if doc is None:
        return ['ARCHITECTURE.md has no ```deps block']
    out = []
    for a in sorted(set(e) | set(doc)):
        have, said = e.get(a, set()), doc.get(a, set())
        out += [f'in the code, not in ARCHITECTURE.md: {a} → {b}' for b in sorted(have - said)]
        out += [f'in ARCHITECTURE.md, not in the code: {a} → {b}' for b in sorted(said - have)]
    return out + ['sibling import cycle: ' + ' ↔ '.join(c) for c in cycles]


def self_test(e, text):
    """The check must fail when one edge is taken out of the block, and when one is added."""
    m = re.search(r'```deps\n(.*?)```', text, re.S)
    first = next(l for l in m.group(1).splitlines() if ',' in l)
    fewer = first.rsplit(',', 1)[0]
    assert check(e, [], text.replace(first, fewer, 1)), 'an edge removed was not found'
    assert check(e, [], text.replace(first, first + ', nowhere', 1)), 'an edge added was not found'
    assert check(e, [['a', 'b']], text), 'a cycle was not reported'
    code = 'mod on { use super::super::x; mod deep { y } } z'
    names = [n for a, b, n in inline_modules(code) if a <= code.index('y') < b]
    assert names == ['on', 'deep'], f'inline modules around y: {names}'
    assert not any(a <= code.index('z') < b for a, b, _ in inline_modules(code)), 'z is outside'


# ------------------------------------------------------------------ the rules ARCHITECTURE.md states
#
# ARCHITECTURE.md's fenced ```rules block: one rule a line, `#` starts a comment. A unit list
# names units as `./dev deps` prints them; `ui` stands for `ui` and every `ui/X`, `core` for
# the modules lib.rs declares, `*` for every unit. Four forms:
#   A, B ↛ C, D            no file of A or B names C or D
#   A, B → only C, D       the files of A and B name nothing but C and D (`→ nothing`: none)
#   A, B names no P, Q     no file of A or B names P or Q
#   only A, B name P, Q    no file outside A and B names P or Q
# P is a path (`leptos`, `std::fs`: it and everything under it, in a `use` or in code) or a
# macro (`println!`).

RULE_FORMS = [
    ('never', re.compile(r'^(?P<a>.+?)\s*↛\s*(?P<b>.+)$')),
    ('only_edges', re.compile(r'^(?P<a>.+?)\s*→\s*(?:only\s+(?P<b>.+)|(?P<none>nothing))$')),
    ('names_no', re.compile(r'^(?P<a>.+?)\s+names\s+no\s+(?P<b>.+)$')),
    ('only_name', re.compile(r'^only\s+(?P<a>.+?)\s+names?\s+(?P<b>.+)$')),
]


def stated_rules(text):
    """The rules of ARCHITECTURE.md's ```rules block as (line, form, A list, B list); None
    when there is no block. A line that fits no form is a rule with form None."""
    m = re.search(r'```rules\n(.*?)```', text, re.S)
    if m is None:
        return None
    out = []
    for line in m.group(1).splitlines():
        rule = line.split('#', 1)[0].strip()
        if not rule:
            continue
        for form, pat in RULE_FORMS:
            r = pat.match(rule)
            if r:
                items = lambda g: [x.strip() for x in (r.group(g) or '').split(',') if x.strip()]
                out.append((rule, form, items('a'), items('b')))
                break
        else:
            out.append((rule, None, [], []))
    return out


def core_units():
    """The modules lib.rs declares: the core."""
    src = without_tests(blank_out(open(os.path.join(ROOT, 'lib.rs')).read()))
    return set(re.findall(r'\bmod\s+(\w+)\s*;', src))


def in_units(u, names, core):
    """Whether unit `u` is one of `names` (`ui` covers `ui/X`; `core`, `*`)."""
    for n in names:
        if n == '*' or u == n or (n == 'ui' and u.startswith('ui/')) or (n == 'core' and u in core):
            return True
    return False


def file_unit(path):
    """The unit of a file for the rules: `./dev deps`'s, with main.rs `main`, lib.rs `lib`."""
    me = module_path(path)
    return unit(me) if me else os.path.basename(path)[:-3]


def names_in(path, wanted):
    """Which of the paths and macros in `wanted` the file at `path` names, outside comments,
    strings and tests."""
    src = without_tests(blank_out(open(path, encoding='utf-8', errors='replace').read()))
    trees, code = use_trees(src)
    used = ['::'.join(segs) for _, t in trees for segs in expand(split_as(t))]
    found = set()
    for w in wanted:
        if w.endswith('!'):
            if re.search(r'(?<![\w:])' + re.escape(w), code):
                found.add(w)
        elif any(u == w or u.startswith(w + '::') for u in used) or re.search(
                r'(?<![\w:])' + re.escape(w) + r'::', code):
            found.add(w)
    return found


def broken_rules(rules, e, files, core):
    """Each stated rule the code breaks, as a line saying where. `e`: the edges; `files`:
    {file: (unit, names it uses among those the rules mention)}."""
    out = []
    for rule, form, a, b in rules:
        if form is None:
            out.append(f'rule `{rule}`: fits no form (↛, → only, names no, only … name)')
        elif form in ('never', 'only_edges'):
            for x in sorted(e):
                if not in_units(x, a, core):
                    continue
                for y in sorted(e[x]):
                    bad = in_units(y, b, core) if form == 'never' else not in_units(y, b, core)
                    if bad:
                        out.append(f'rule `{rule}` broken: {x} → {y}')
        else:
            for f, (u, used) in sorted(files.items()):
                inside = in_units(u, a, core)
                if inside == (form == 'names_no'):
                    for n in sorted(used & set(b)):
                        out.append(f'rule `{rule}` broken: {f} names {n}')
    return out


def rules_self_test(core):
    """Each form must find a rule broken when the code breaks it, and keep quiet otherwise."""
    text = '```rules\nparse ↛ answers\nmodel → nothing\nquery → only model  # c\n' \
           'core names no std::fs, println!\nonly ui name leptos\n```'
    rules = stated_rules(text)
    assert [r[1] for r in rules] == ['never', 'only_edges', 'only_edges', 'names_no', 'only_name']
    fine = {'query': {'model'}}
    files = {'src/ui/app.rs': ('ui/app', {'leptos', 'std::fs'}), 'src/cli/mod.rs': ('cli', {'std::fs'})}
    assert not broken_rules(rules, fine, files, core), 'a rule kept was said broken'
    for e, f in [({'parse': {'answers'}}, {}), ({'model': {'shape'}}, {}),
                 ({'query': {'analysis'}}, {}), ({}, {'src/parse/x.rs': ('parse', {'println!'})}),
                 ({}, {'src/cli/mod.rs': ('cli', {'leptos'})})]:
        assert len(broken_rules(rules, e, f, core)) == 1, f'not found broken: {e} {f}'
    assert broken_rules(stated_rules('```rules\nparse likes answers\n```'), {}, {}, core)


def main():
    crate = Crate()
    e = edges(crate)
    cycles = sibling_cycles(crate)
    if '--check' not in sys.argv:
        print('\n'.join(render(e)))
        for c in cycles:
            print('cycle: ' + ' ↔ '.join(c))
        return 0
    text = open('ARCHITECTURE.md', encoding='utf-8').read()
    core = core_units()
    self_test(e, text)
    rules_self_test(core)
    problems = check(e, cycles, text)
    rules = stated_rules(text)
    if rules is None:
        problems.append('ARCHITECTURE.md has no ```rules block')
    else:
        wanted = {n for _, form, _, b in rules if form in ('names_no', 'only_name') for n in b}
        files = {p: (file_unit(p), names_in(p, wanted)) for p in crate.files}
        problems += broken_rules(rules, e, files, core)
    print('\n'.join(problems) if problems else
          f'deps: ARCHITECTURE.md agrees with the code ({sum(map(len, e.values()))} edges), '
          f'its {len(rules)} rules hold, no sibling import cycle')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
