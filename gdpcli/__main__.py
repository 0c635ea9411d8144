"""`python -m gdpcli`."""

from gdpcli.cli.app import main

main()
