"""Pure numerics of gdpcli: numpy and scipy only, no I/O, no CLI imports."""
