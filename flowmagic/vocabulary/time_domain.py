"""Whether a firing timer is an event-time or a processing-time one (PyFlink's ``TimeDomain``)."""

from __future__ import annotations

from enum import Enum

__all__ = ["TimeDomain"]


class TimeDomain(Enum):
    """What ``ctx.time_domain()`` in ``on_timer`` says: the timer was registered with
    ``register_event_time_timer`` (``EVENT_TIME``) or ``register_processing_time_timer``."""

    EVENT_TIME = 0
    PROCESSING_TIME = 1
