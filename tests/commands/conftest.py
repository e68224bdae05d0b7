"""Fixtures for the command tests."""

from tests.core.as_reader import world_readable_dir  # noqa: F401  (a fixture)
