"""The spec language's old address: it is gdpcli.events.spec now. Kept only for the callers outside the
package's own code (tools/generate_docs.py, benchmarks/bench_pld.py, a PLD test) until they import it from
there; nothing in gdpcli imports this module."""

from gdpcli.events.spec import KIND_KEYS, parse_spec

__all__ = ["KIND_KEYS", "parse_spec"]
