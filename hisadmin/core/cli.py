"""What the operator's commands share: their progress bar and the ``--by`` argument."""

from __future__ import annotations

from django.core.management.base import CommandParser
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn


def progress_bar(*, counted: bool = False) -> Progress:
    """A transient bar on standard error (standard output keeps the command's report
    alone); ``counted`` shows "n/total" instead of a percentage."""
    return Progress("[progress.description]{task.description}", BarColumn(),
                    MofNCompleteColumn() if counted else TaskProgressColumn(),
                    transient=True, console=Console(stderr=True))


def add_by_argument(parser: CommandParser) -> None:
    """``--by USERNAME``: the admin a change is attributed to (default: system)."""
    parser.add_argument("--by", default=None, metavar="USERNAME",
                        help="the admin this change is attributed to (default: system)")
