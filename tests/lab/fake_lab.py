"""A stand-in for lab.topology.Lab: what the Runner uses of a Lab, recording each command (no lab)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any


class FakeLab:
    """What Runner.network and Runner._split_capture use of a Lab, recording each command."""

    def __init__(self) -> None:
        self.commands: list[list[str]] = []
        self.tools = SimpleNamespace(fio=Path("/x/fio"))

    def set_link(self, one_way_delay_ms: float, link_mbps: float) -> None:
        """Nothing to set without a lab."""

    def spawn(self, ns: str, cmd: list[str], what: str) -> int:
        self.commands.append(cmd)
        return 1

    def stop(self, pid: int, grace_s: float) -> None:
        """Nothing to stop."""

    def run(
        self, ns: str, cmd: list[str], timeout_s: float, what: str, stdout_path: Path | None = None
    ) -> Any:
        self.commands.append(cmd)
        if stdout_path is not None:
            stdout_path.write_text("{}")
        for arg in cmd:  # fio writes its JSON where --output says
            if arg.startswith("--output="):
                Path(arg.removeprefix("--output=")).write_text("{}")
        return subprocess.CompletedProcess(cmd, 0, "", "")
