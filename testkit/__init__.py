"""The test kit: pytest fixtures for suites that test this product (testkit.plugin)."""
