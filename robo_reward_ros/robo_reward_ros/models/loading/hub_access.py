# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""One quick question to the model hub before any file is fetched from it.

huggingface_hub retries a failed connection five times with back-off, about 25 s per file, so on
a robot without a network a load used to spend minutes before failing, even for a model already
in the hub cache. One short request per model id tells the cases apart first:
- the hub answers: loading goes on as usual (downloads, or cache with up-to-date checks);
- the hub says there is no such model (or none this machine may see): fail at once, saying so;
- the hub cannot be reached: this process switches huggingface_hub to offline mode, so the model
  loads from the hub cache without a retry, or fails at once naming both causes.
"""
from __future__ import annotations

import logging
from typing import Dict

PROBE_TIMEOUT_SEC = 5.0
REACHABLE, MISSING, UNREACHABLE, OFFLINE = "reachable", "missing", "unreachable", "offline"

_LOG = logging.getLogger(__name__)
_outcomes: Dict[str, str] = {}  # model id -> one of the outcomes above
_unreachable_reason = ""


def probe(model_id: str) -> str:
    """Ask the hub about ``model_id`` once per process; return the outcome."""
    global _unreachable_reason
    from huggingface_hub import HfApi, constants
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError
    if model_id in _outcomes:
        return _outcomes[model_id]
    if constants.HF_HUB_OFFLINE:
        return OFFLINE
    try:
        HfApi().model_info(model_id, timeout=PROBE_TIMEOUT_SEC)
        outcome = REACHABLE
    except RepositoryNotFoundError:
        outcome = MISSING
    except HfHubHTTPError:  # gated, rate-limited, a server error: the download says which
        outcome = REACHABLE
    except Exception as exc:  # refused, no DNS, timed out, a proxy: no network to the hub
        outcome = UNREACHABLE
        _unreachable_reason = f"{constants.ENDPOINT} could not be reached ({type(exc).__name__}: {exc})"
        constants.HF_HUB_OFFLINE = True
        _LOG.warning("the model hub %s; loading from this machine's hub cache only", _unreachable_reason)
    _outcomes[model_id] = outcome
    return outcome


def why_not_here(model_id: str) -> str:
    """Say why a hub id gave no file here, from what the probe found."""
    from huggingface_hub import constants
    outcome = _outcomes.get(model_id, OFFLINE if constants.HF_HUB_OFFLINE else REACHABLE)
    if outcome == MISSING:
        return (f"the model hub ({constants.ENDPOINT}) has no model '{model_id}' that this machine may "
                "see (check the spelling; a private or gated model needs `hf auth login`)")
    if outcome == UNREACHABLE or (outcome == OFFLINE and _unreachable_reason):
        return f"it is not in this machine's hub cache, and the model hub {_unreachable_reason}"
    if outcome == OFFLINE:
        return "it is not in this machine's hub cache and HF_HUB_OFFLINE=1 (nothing is downloaded)"
    return f"the model hub ({constants.ENDPOINT}) did not give it"
