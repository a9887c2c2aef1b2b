#!/usr/bin/env python3
"""Rooms past the house sizes. Prints one line each; `./dev rooms` runs it.

Shipped code: source files under src/ over 600 lines and functions over 80 lines, with
`#[cfg(test)]` modules and `tests.rs` files left out.
Tests: a test room may hold 600 lines and a test function 120. Test rooms are the Rust files
under tests/ (tests/*.rs, tests/common/*.rs, the fuzz target), src's `tests.rs` files, and
each `#[cfg(test)]` module inside a src file, measured on its own: it does not count toward
its file's shipped 600, and it is a room of 600 by itself (its line tagged `#[cfg(test)]
mod`). The JavaScript and Python under tests/ (e2e, python, bench) are held to 600 lines
per file; their test functions are not measured.
`.ci/deps.py` (`./dev deps`) borrows its lexing of Rust."""
import os
import re
import sys

FILE_LINES, FN_LINES = 600, 80
TEST_FN_LINES = 120


def blank_out(src):
    """Comments, strings and char literals replaced by spaces (newlines kept), so that
    braces can be matched and line numbers stay right."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith('//', i):
            j = src.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif src.startswith('/*', i):
            j = src.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', src[i:j]))
            i = j
        elif src[i] == '"' or src.startswith('r#"', i) or src.startswith('r"', i):
            raw = src[i] == 'r'
            hashes = 0
            k = i + 1
            while raw and src[k] == '#':
                hashes += 1
                k += 1
            end = '"' + '#' * hashes
            j = k + (1 if raw else 0) if raw else i + 1
            while j < n:
                if not raw and src[j] == '\\':
                    j += 2
                    continue
                if src.startswith(end, j):
                    j += len(end)
                    break
                j += 1
            out.append(re.sub(r'[^\n]', ' ', src[i:j]))
            i = j
        elif src[i] == "'" and re.match(r"'(\\.|[^\\'])'", src[i:i + 4]):
            m = re.match(r"'(\\.|[^\\'])'", src[i:i + 4])
            out.append(' ' * len(m.group(0)))
            i += len(m.group(0))
        else:
            out.append(src[i])
            i += 1
    return ''.join(out)


TEST_MOD = r'#\[cfg\(test\)\]\s*(pub(\(crate\))?\s+)?mod \w+\s*\{'


def without_tests(src):
    m = re.search(TEST_MOD, src)
    return src if m is None else src[:m.start()]


def closing(src, j):
    """The index of the brace closing the one at `j` (or the end)."""
    depth = 0
    while j < len(src):
        if src[j] == '{':
            depth += 1
        elif src[j] == '}':
            depth -= 1
            if depth == 0:
                break
        j += 1
    return j


def long_functions(src, limit, start=0):
    """(first line, name, lines) of each function in blanked `src[start:]` over `limit`."""
    for m in re.finditer(r'\bfn\s+(\w+)[^;{]*\{', src[start:]):
        j = closing(src, start + m.end() - 1)
        first = src.count('\n', 0, start + m.start()) + 1
        last = src.count('\n', 0, j) + 1
        if last - first + 1 > limit:
            yield first, m.group(1), last - first + 1


def read(path):
    return open(path, encoding='utf-8', errors='replace').read()


def test_room(p, src, start=0, tag='test'):
    """A test room of blanked `src[start:]`: its length, then its long test functions."""
    lines = src.count('\n', start)
    if lines > FILE_LINES:
        print(f'{p}: {lines} lines ({tag})')
    for line, name, count in long_functions(src, TEST_FN_LINES, start):
        print(f'{p}:{line} fn {name}: {count} lines (test)')


def walk(root, ends):
    for dp, ds, fs in sorted(os.walk(root)):
        ds[:] = sorted(d for d in ds if d not in ('target', 'node_modules', 'corpus'))
        for f in sorted(fs):
            if f.endswith(ends):
                yield dp, f


def rooms(root):
    for dp, f in walk(root, '.rs'):
        p = os.path.join(dp, f)
        src = blank_out(read(p))
        if f == 'tests.rs':
            test_room(p, src)
            continue
        code = without_tests(read(p))
        lines = code.count('\n')
        if lines > FILE_LINES:
            print(f'{p}: {lines} lines (tests left out)')
        for line, name, count in long_functions(without_tests(src), FN_LINES):
            print(f'{p}:{line} fn {name}: {count} lines')
        m = re.search(TEST_MOD, src)
        if m is not None:
            test_room(p, src[:closing(src, m.end() - 1) + 1], m.start(), '#[cfg(test)] mod')


def test_rooms(root):
    for dp, f in walk(root, ('.rs', '.mjs', '.py')):
        p = os.path.join(dp, f)
        if f.endswith('.rs'):
            test_room(p, blank_out(read(p)))
        elif read(p).count('\n') > FILE_LINES:
            print(f'{p}: {read(p).count(chr(10))} lines (test)')


if __name__ == '__main__':
    rooms('src')
    test_rooms('tests')
