"""``python -m workbench`` is the ``workbench`` command."""

from workbench.cli.main import run

run()
