"""The command-line layer: parses options, calls gdpcli.core through gdpcli.accounting, renders rows."""
