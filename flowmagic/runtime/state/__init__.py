"""Keyed state and timers: the state backend (``keyed_state``), states with a time-to-live
(``state_ttl``) and the timer queues (``timer_queue``)."""
