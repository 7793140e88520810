"""runlog's Python client: a run's history as typed objects and tables, and recording through
the engine's rules.

    from runlog import Client

    client = Client("https://runlog.example:7700", token="...", ca="ca.pem")
    for run in client.runs(outcome="failed"):
        print(run.run, run.status)
    client.verdicts().to_pandas()
"""

from . import models
from ._calls import KEEP, Call
from .async_client import AsyncClient
from .client import Client
from .errors import ApiError, RunlogError, StreamLagged
from .tables import Audit, Calls, Cost, Events, Verdicts

__all__ = [
    "KEEP",
    "ApiError",
    "AsyncClient",
    "Audit",
    "Call",
    "Calls",
    "Client",
    "Cost",
    "Events",
    "RunlogError",
    "StreamLagged",
    "Verdicts",
    "models",
]
__version__ = "0.1.0"
