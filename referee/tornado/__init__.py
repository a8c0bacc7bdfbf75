"""tornado referee."""
