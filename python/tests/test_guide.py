"""The Python examples of docs/guide.md run as written."""

import re

from conftest import REPO


def python_blocks():
    text = (REPO / "docs" / "guide.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_guide_has_python_examples():
    assert python_blocks(), "docs/guide.md has no ```python example"


def test_guide_examples_run(capsys):
    for block in python_blocks():
        exec(compile(block, "docs/guide.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "max_model_len" in printed
