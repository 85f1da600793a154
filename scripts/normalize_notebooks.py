"""Normalize source notebooks: python3 kernelspec, no outputs, only tags kept in cell metadata."""
import sys, nbformat
for p in sys.argv[1:]:
    nb = nbformat.read(p, 4)
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                   "language_info": {"name": "python"}}
    for c in nb.cells:
        c.metadata = {k: v for k, v in c.metadata.items() if k == "tags"}
        if c.cell_type == "code":
            c.outputs = []; c.execution_count = None
    nbformat.write(nb, p)
