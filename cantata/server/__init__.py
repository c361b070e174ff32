"""Cantata's HTTP server: every pipeline as an OpenAI-compatible model, a REST and event
API over the same store, Prometheus metrics, API keys, and the dashboard (static files)."""

from cantata.server.app import create_app

__all__ = ["create_app"]
