"""Tests that run inside an MPI job (a package, so its conftest is not the `conftest`
module other test directories import from)."""
