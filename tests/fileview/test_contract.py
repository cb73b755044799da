"""The file viewer's route and the own-tab event names are declared once, in graphlab/fileview/contract.py.

Both front-ends import them from ``hostContract.gen.ts``, which graphlab.fileview.contract_ts writes:
a committed copy that is not what it writes fails here, and so does a front-end file that spells a
contract name by hand again.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from graphlab import fileview
from graphlab.fileview import contract, contract_ts

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_generated_files_are_current():
    assert contract_ts.stale() == [], f"run {contract_ts.COMMAND}"
    texts = {path.read_text(encoding="utf-8") for path in contract_ts.TARGETS}
    assert texts == {contract_ts.generate()}


def test_the_generated_file_exports_every_contract_name():
    text = contract_ts.generate()
    for name, value, _ in contract.CONTRACT:
        assert re.search(rf'^export const {name} = "{re.escape(value)}";$', text, re.M), name
    assert fileview.ROUTE == contract.ROUTE == "graphlab/drawing"


def test_no_front_end_file_spells_a_contract_value_by_hand():
    sources = [*ROOT.glob("extension/src/**/*.ts"), *ROOT.glob("labextension/src/**/*.ts")]
    hand = [
        f"{path.relative_to(ROOT)}: {value}"
        for path in sources
        if not path.name.endswith(".gen.ts")
        for _, value, _ in contract.CONTRACT
        if f'"{value}"' in path.read_text(encoding="utf-8")
    ]
    assert hand == []


def test_check_finds_a_stale_copy(tmp_path, monkeypatch):
    copies = (tmp_path / "a.gen.ts", tmp_path / "b.gen.ts")
    monkeypatch.setattr(contract_ts, "TARGETS", copies)
    assert contract_ts.main(["--write"]) == 0 and contract_ts.stale() == []
    copies[1].write_text(copies[1].read_text().replace("graphlab:open-tab", "graphlab:open"), encoding="utf-8")
    assert contract_ts.stale() == [copies[1]]
    assert contract_ts.main(["--check"]) == 1


def test_the_generator_runs_as_a_module():
    done = subprocess.run(
        [sys.executable, "-m", "graphlab.fileview.contract_ts"], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout == contract_ts.generate()
