"""Live turns across workers, through Redis (on when `REFLEX_REDIS_URL` is set).

With one process a turn lives in the process that started it (`agent.session`). Behind one
address several workers serve the same pages, so a page may be served by a worker that
does not run the turn it shows. Here:

- `config`: the setting, the key names and the timings.
- `publisher`: the owner appends each event to the stream `turn:{message_id}`, id `{seq}-0`.
- `remote`: another worker follows it (`RemoteTurn`): the log, then the stream.
- `lease`: a running turn holds `lease:turn:{conversation_id}`, renewed while it runs.
- `orphans`: the turns of a worker that died are taken over by whoever notices: a turn
  waiting for the user resumes there, any other ends as interrupted.
- `control`: Stop, approvals and answers from any worker reach the owner over
  `turn-control:{message_id}`.
- `owner`: the owner's side of one turn (lease, publisher, the order things end in).
- `worker`: `Cluster`, this worker's part of it all.

docs/turns.md ("More than one process") says why Streams, and what each part guarantees.
"""

from intent_ui.agent.cluster.config import REDIS_URL_ENV, ClusterConfig
from intent_ui.agent.cluster.remote import RemoteTurn
from intent_ui.agent.cluster.worker import Cluster, ClusterError

__all__ = ["REDIS_URL_ENV", "Cluster", "ClusterConfig", "ClusterError", "RemoteTurn"]
