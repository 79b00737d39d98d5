"""hermes_store memory provider for Hermes Agent (the plugin-catalog copy).

`hermes plugins install hermes_store` places this directory in <HERMES_HOME>/plugins/hermes_store/;
set `memory.provider: hermes_store` in config.yaml to activate it (tools: fact_store,
fact_feedback, recall). The code lives in the hermes_store package, which must be installed
for Hermes' Python (plugin.yaml lists it under pip_dependencies).
"""

import sys

PROVIDER_NAME = "hermes_store"


def _plugin_module():
    try:
        from hermes_store import hermes_plugin
    except ImportError:
        raise ImportError(
            "hermes_store is not installed for this Python (" + sys.executable + "); install it "
            "with: " + sys.executable + " -m pip install hermes_store"
        ) from None
    return hermes_plugin


def register(ctx):
    """Hermes calls this: ctx.register_memory_provider(<MemoryProvider>)."""
    ctx.register_memory_provider(_plugin_module().make_provider(PROVIDER_NAME))
