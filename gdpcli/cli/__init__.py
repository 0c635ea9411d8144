"""The command-line layer: parses options, builds events, calls gdpcli.accounting, renders rows."""
