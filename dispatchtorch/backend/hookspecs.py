"""pluggy hook specifications. A backend package registers a module or object with
an implementation of `dispatchtorch_backend` under the entry-point group
`dispatchtorch.backends`."""
import pluggy

PROJECT = "dispatchtorch"
ENTRY_POINT_GROUP = "dispatchtorch.backends"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def dispatchtorch_backend():
    """Return this plugin's Backend instance.

    Called once, the first time the backend's device type is used or the backends
    are listed. Keep module import cheap: do driver work here, not at import.
    """
