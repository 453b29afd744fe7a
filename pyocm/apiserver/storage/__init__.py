"""Storage of the API server: revisioned key-value stores with compare-and-swap and watch.

Read in this order:

- :mod:`~pyocm.apiserver.storage.interface`: the contract (``Backend``, ``KeyValue``,
  ``Event``) that the registry codes against; its docstrings are the specification.
- :mod:`~pyocm.apiserver.storage.errors`: the errors a store raises, as values.
- :mod:`~pyocm.apiserver.storage.logstructured`: the MVCC rules, written once over a
  small durable ``Log``: revisions, preconditions, the in-memory state, the watch
  history ring and the fan-out to watchers.
- :mod:`~pyocm.apiserver.storage.sqlite`: the SQLite ``Log`` (schema, one writer
  thread with group commit, error translation).
- :mod:`~pyocm.apiserver.storage.memory`: a ``Log`` that commits at once, for tests and
  the simulator.
- :mod:`~pyocm.apiserver.storage.fanout`: the in-process watchers' bounded queues, fed
  by every backend.
- :mod:`~pyocm.apiserver.storage.etcd`: etcd v3 as the store (etcd's revisions and
  compare-and-swap, one watch feeding hooks and watchers), over
  :mod:`~pyocm.apiserver.storage.etcdgateway`, a client of etcd's JSON gateway.
- :mod:`~pyocm.apiserver.storage.backends`: ``open_backend(url)``, the table from URL
  scheme to store.

What this package must not do: know about Kubernetes objects (values are opaque bytes)
or about HTTP; translate its own errors into API errors (the registry does that once).
"""

from __future__ import annotations

from pyocm.apiserver.storage.backends import open_backend
from pyocm.apiserver.storage.interface import Backend, CommitHook, Event, EventType, KeyValue
from pyocm.apiserver.storage.logstructured import LogStructured, Options

__all__ = [
    "Backend",
    "CommitHook",
    "Event",
    "EventType",
    "KeyValue",
    "LogStructured",
    "Options",
    "open_backend",
]
