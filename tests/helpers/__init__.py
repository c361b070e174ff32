"""What several test modules share that is not a fixture (fixtures live in tests/conftest.py):
in-process and subprocess servers, an SSE parser, pipeline and config writers, store factories."""
