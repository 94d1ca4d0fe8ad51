"""The one error a layout raises when it is refused: it names the file and the element."""

from __future__ import annotations


class LayoutError(ValueError):
    """A layout that cannot be used; ``problems`` lists each "file: element: what is wrong"."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))
