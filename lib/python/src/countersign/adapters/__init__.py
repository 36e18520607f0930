"""Framework adapters: ``countersign.adapters.dendrux``, ``.langgraph`` and ``.openai_agents``.

Each needs its framework installed (the package's extras of the same names) and is imported on
its own, so the client never imports a framework it does not use.
"""
