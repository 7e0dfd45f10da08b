"""The browser-token key every replica sharing a home reads: one key, never empty, even when replicas start
together (`costa.session.seal.Sealer.for_home`)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from costa.errors import InputError
from costa.session.seal import Sealer


def test_replicas_starting_together_on_a_fresh_home_all_read_one_non_empty_key(tmp_path: Path) -> None:
    """Eight starts at once, 100 fresh homes. Before, a start could read the file another had created and not yet
    filled (an empty key: forgeable tokens) or overwrite it (tokens the other replicas cannot open): 9 of 200 such
    homes ended with different keys, 7 with an empty one."""
    split = []
    for trial in range(100):
        home = tmp_path / f"home{trial}"
        gate = threading.Barrier(8)
        keys: list[bytes] = []

        def start(home: Path = home, gate: threading.Barrier = gate, keys: list[bytes] = keys) -> None:
            gate.wait()
            keys.append(Sealer.for_home(home).key)

        threads = [threading.Thread(target=start) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if len(set(keys)) != 1 or b"" in keys:
            split.append(trial)
        assert [p.name for p in home.iterdir() if p.name.startswith(".browser_secret")] == []  # no temporary left
    assert split == []
    a, b = Sealer.for_home(tmp_path / "home0"), Sealer.for_home(tmp_path / "home0")
    assert b.unseal(a.seal(["s1", "s2"])) == ["s1", "s2"]  # a token one replica sealed, another opens


def test_an_empty_key_file_is_refused_not_used(tmp_path: Path) -> None:
    (tmp_path / "browser_secret").write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="browser_secret is empty"):
        Sealer.for_home(tmp_path)
