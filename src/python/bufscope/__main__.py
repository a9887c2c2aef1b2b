"""`python -m bufscope ARGS…`: the `bufscope` binary of this package with ARGS."""

import os
import sys

from bufscope import find_bufscope_bin


def _main() -> None:
    binary = find_bufscope_bin()
    if sys.platform == "win32":
        import subprocess

        sys.exit(subprocess.run([binary, *sys.argv[1:]]).returncode)
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    _main()
