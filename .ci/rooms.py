#!/usr/bin/env python3
"""Rooms past the house sizes: source files under src/ over 600 lines and functions over 80
lines (`#[cfg(test)]` modules left out). Prints one line each; `./dev rooms` runs it.
`.ci/deps.py` (`./dev deps`) borrows its lexing of Rust."""
import os
import re
import sys

FILE_LINES, FN_LINES = 600, 80


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


def without_tests(src):
    m = re.search(r'#\[cfg\(test\)\]\s*(pub(\(crate\))?\s+)?mod \w+\s*\{', src)
    return src if m is None else src[:m.start()]


def long_functions(path):
    src = without_tests(blank_out(open(path, encoding='utf-8', errors='replace').read()))
    for m in re.finditer(r'\bfn\s+(\w+)[^;{]*\{', src):
        depth, j = 0, m.end() - 1
        while j < len(src):
            if src[j] == '{':
                depth += 1
            elif src[j] == '}':
                depth -= 1
                if depth == 0:
                    break
            j += 1
        first = src.count('\n', 0, m.start()) + 1
        last = src.count('\n', 0, j) + 1
        if last - first + 1 > FN_LINES:
            yield first, m.group(1), last - first + 1


def rooms(root):
    for dp, _, fs in sorted(os.walk(root)):
        for f in sorted(fs):
            if not f.endswith('.rs') or f == 'tests.rs':
                continue
            p = os.path.join(dp, f)
            code = without_tests(open(p, encoding='utf-8', errors='replace').read())
            lines = code.count('\n')
            if lines > FILE_LINES:
                print(f'{p}: {lines} lines (tests left out)')
            for line, name, count in long_functions(p):
                print(f'{p}:{line} fn {name}: {count} lines')


if __name__ == '__main__':
    rooms('src')
