"""Generic asyncio utilities with no Kubernetes or OCM knowledge: the injectable clock,
the work queue and its rate limiting. Every other layer may stand on this one; it
imports nothing else of pyocm (import-linter holds it to that)."""
