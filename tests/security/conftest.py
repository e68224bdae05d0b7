from tests.fakejudge import fake_judge  # noqa: F401  (the fixture)
