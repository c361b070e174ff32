"""Cantata: teams of role-specialised LLM agents on models you host yourself."""

__version__ = "0.1.0"
