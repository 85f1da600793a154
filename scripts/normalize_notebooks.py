"""Normalize source notebooks: python3 kernelspec, no outputs, only tags kept in cell metadata."""

import sys

import nbformat

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def normalize(path: str) -> None:
    """Rewrite one notebook in place in the canonical source form."""
    nb = nbformat.read(path, 4)
    nb.metadata = {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    for cell in nb.cells:
        cell.metadata = {k: v for k, v in cell.metadata.items() if k == "tags"}
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nbformat.write(nb, path)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        normalize(arg)
