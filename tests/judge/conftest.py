from tests.core.as_reader import world_readable_dir  # noqa: F401  (a fixture)
from tests.fakejudge import fake_judge  # noqa: F401  (the fixture, shared with the TUI tests)
