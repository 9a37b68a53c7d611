"""Every Python code block of bindings/python/README.md runs, and so does the example script."""

import os
import re
import subprocess
import sys

import pytest

README = os.environ.get("DPMO_README", "")
EXAMPLES = os.environ.get("DPMO_EXAMPLES", "")


def blocks():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_readme_has_python_blocks():
    assert len(blocks()) >= 5


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("index", range(6))
def test_readme_block_runs(index, spark):
    code = blocks()
    if index >= len(code):
        pytest.skip("fewer blocks")
    exec(compile(code[index], f"README.md block {index}", "exec"), {"__name__": "__readme__"})


def test_example_script_runs():
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "events_to_topk.py")], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "private top-5 by buyers" in out.stdout and "remaining 0.0" in out.stdout
