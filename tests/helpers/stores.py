"""What the store tests are given: a factory that opens a store. Calling a shared one twice
gives two stores (two connections, as two processes would have) on the same data."""

from __future__ import annotations

from collections.abc import Callable

from cantata.store import Store

StoreFactory = Callable[[], Store]
