"""``hermes-store mcp``: the store's tools and memory resources for any MCP client (a front end).

Built on the official ``mcp`` SDK (the ``hermes_store[mcp]`` extra). The package is
named ``mcp_server`` so it never shadows the SDK's own ``mcp`` package. See
:mod:`hermes_store.mcp_server.server` for the behaviour, :mod:`.catalog` for titles,
hints and read-only rules, :mod:`.resources` for the ``memory://`` resources.
"""
