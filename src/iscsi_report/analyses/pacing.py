"""Which R2T pacing a target uses, read from captured writes of today's system.

The pacing is a property of the target's software, not of one configuration: how it issues R2Ts
when the negotiated window allows several at once. Three behaviours are told apart by what the
initiator sees (its capture point):

- **serial** (stock tgt): never more than one R2T outstanding, although the window allows more;
- **sliding** (LIO, the lab's patched tgt): R2T number W (2W, ...) arrives while bursts of earlier
  R2Ts are still outstanding at the initiator, because the target issued it as soon as one burst
  arrived;
- **lockstep** (the blog's model): more than one outstanding, but the first R2T of each later
  group arrives only when every earlier burst has gone out (the target waited for the whole group).

A sliding target looks the same from the initiator whenever every burst is out before the next
R2T can arrive (long delays, fast links), so the absence of early R2Ts does not prove lockstep:
the detector then says it cannot tell the two apart (no verdict) rather than guess.

Only writes that can show it count: a window of 2 or more and more R2Ts than the window.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from iscsi_report.core import model

# A pacing is read from at least this many informative writes; fewer and it is not detected.
MIN_WRITES = 3
# Share of informative writes that must show more than one R2T outstanding to rule out serial.
MIN_SHARE_OVERLAPPING = 0.10
# Share that must show a later R2T arriving while earlier bursts are outstanding to call it sliding.
MIN_SHARE_SLIDING = 0.10


@dataclass(frozen=True)
class PacingEvidence:
    """The pacing read from captures (None: not enough evidence), and what it was read from."""

    pacing: model.Pacing | None
    writes: int  # informative writes (window >= 2, more R2Ts than the window)
    overlapping: int  # of those, writes with more than one R2T outstanding at once
    sliding: int  # of those, writes where a later R2T arrived while earlier bursts were outstanding
    files: tuple[str, ...]

    def reason(self) -> str:
        """One sentence a page or the CLI prints: what was seen and what it means."""
        if self.pacing is None and self.writes >= MIN_WRITES and self.overlapping:
            return (
                f"not detected: in {self.writes} captured writes with a window of 2 or more no later "
                "group's first R2T arrived while bursts were outstanding: lockstep, or sliding hidden "
                "by the delay, which a capture at a short delay would tell apart"
            )
        if self.pacing is None:
            return (
                f"not detected: {self.writes} captured write(s) with a window of 2 or more and more "
                f"R2Ts than the window (at least {MIN_WRITES} needed)"
            )
        seen = (
            f"{self.writes} captured writes from {len(self.files)} file(s) with a window of 2 or more: "
            f"{self.overlapping} had more than one R2T outstanding, {self.sliding} received a later "
            "R2T while earlier bursts were still outstanding"
        )
        return f"{self.pacing}, read from {seen}"


def write_shows(events: pd.DataFrame, window: int) -> tuple[bool, bool] | None:
    """(more than one R2T outstanding, a later R2T arrived with bursts outstanding) for one write.

    ``events`` is one command's rows of :func:`iscsi_report.core.ingest.tshark.timeline`; None when
    the write cannot show the pacing (window below 2, or no more R2Ts than the window).
    """
    r2t = events[events["event"] == "r2t"]
    if window < 2 or len(r2t) <= window:
        return None
    overlapping = int(events["outstanding_r2t"].max()) > 1
    # The first R2T of each later group (R2T number W, 2W, ...) and what was outstanding just before
    # it: lockstep sends it only after every burst of the group before, so nothing is outstanding.
    group_starts = r2t["outstanding_r2t"].iloc[window::window] - 1
    return overlapping, bool((group_starts > 0).any())


@dataclass(frozen=True)
class Counts:
    """One capture's informative writes, and how many showed overlap and sliding."""

    writes: int
    overlapping: int
    sliding: int


def file_counts(timeline: pd.DataFrame, window: int) -> Counts:
    """:class:`Counts` of one capture's timeline (its commands, each judged by :func:`write_shows`)."""
    shown = [write_shows(g, window) for _, g in timeline.groupby(["stream", "itt"], sort=False)]
    informative = [s for s in shown if s is not None]
    return Counts(len(informative), sum(o for o, _ in informative), sum(s for _, s in informative))


def combine(per_file: Iterable[tuple[str, Counts]]) -> PacingEvidence:
    """The pacing from each capture's counts, summed (the files with informative writes named)."""
    items = list(per_file)
    writes = sum(c.writes for _, c in items)
    overlapping = sum(c.overlapping for _, c in items)
    sliding = sum(c.sliding for _, c in items)
    files = tuple(rel for rel, c in items if c.writes)
    return PacingEvidence(_verdict(writes, overlapping, sliding), writes, overlapping, sliding, files)


def detect(captured: Iterable[tuple[str, pd.DataFrame, int]]) -> PacingEvidence:
    """The pacing from ``(file, timeline, window)`` triples of captured writes (see the module doc)."""
    return combine((rel, file_counts(timeline, window)) for rel, timeline, window in captured)


def _verdict(writes: int, overlapping: int, sliding: int) -> model.Pacing | None:
    """The rule of the module docstring, with its named thresholds."""
    if writes < MIN_WRITES:
        return None
    if overlapping < MIN_SHARE_OVERLAPPING * writes:
        return "serial"
    if sliding >= max(1.0, MIN_SHARE_SLIDING * writes):
        return "sliding"
    return None  # lockstep, or sliding hidden by the delay: not told apart (module docstring)
