"""Flink's restart strategies: whether, and after how long, a failed continuous job restarts.

Flink 2.3 reads ``restart-strategy.type`` (deprecated key ``restart-strategy``): ``none``
(``off``, ``disable``), ``fixed-delay`` (``fixeddelay``), ``failure-rate`` (``failurerate``)
or ``exponential-delay`` (``exponentialdelay``), each with its own options under
``restart-strategy.<type>.*``, with the defaults of Flink's ``RestartStrategyOptions``. Without
a type, a job with checkpointing enabled restarts under ``exponential-delay`` with its
defaults, and one without never restarts.

:class:`RestartStrategy` is the configuration (plain data, parsed once when the program is
configured); :meth:`RestartStrategy.backoff` makes the tracker a running continuous job
consults at each failure, as Flink's ``RestartBackoffTimeStrategy``.
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from flowmagic.errors import InvalidArgumentError
from flowmagic.vocabulary.option_values import option_float, option_int, option_millis

__all__ = ["RESTART_OPTIONS", "RestartBackoff", "RestartStrategy"]

_INT_MAX = 2**31 - 1

#: Flink's names of each type: its main value first.
_TYPES = {
    "disable": ("disable", "none", "off"),
    "fixed-delay": ("fixed-delay", "fixeddelay"),
    "failure-rate": ("failure-rate", "failurerate"),
    "exponential-delay": ("exponential-delay", "exponentialdelay"),
}

#: The options a configuration sets a restart strategy with (the type, then its own).
RESTART_OPTIONS = (
    "restart-strategy.type",
    "restart-strategy",
    "restart-strategy.fixed-delay.attempts",
    "restart-strategy.fixed-delay.delay",
    "restart-strategy.failure-rate.max-failures-per-interval",
    "restart-strategy.failure-rate.failure-rate-interval",
    "restart-strategy.failure-rate.delay",
    "restart-strategy.exponential-delay.initial-backoff",
    "restart-strategy.exponential-delay.max-backoff",
    "restart-strategy.exponential-delay.backoff-multiplier",
    "restart-strategy.exponential-delay.reset-backoff-threshold",
    "restart-strategy.exponential-delay.jitter-factor",
    "restart-strategy.exponential-delay.attempts-before-reset-backoff",
)


@dataclass(frozen=True)
class RestartStrategy:
    """A restart strategy and its options, with Flink 2.3's defaults."""

    #: The main value of Flink's type: ``disable``, ``fixed-delay``, ``failure-rate``,
    #: ``exponential-delay``.
    type: str = "disable"
    fixed_delay_attempts: int = 1
    fixed_delay_ms: int = 1_000
    failure_rate_max_failures: int = 1
    failure_rate_interval_ms: int = 60_000
    failure_rate_delay_ms: int = 1_000
    initial_backoff_ms: int = 1_000
    max_backoff_ms: int = 60_000
    backoff_multiplier: float = 1.5
    reset_backoff_threshold_ms: int = 3_600_000
    jitter_factor: float = 0.1
    attempts_before_reset_backoff: int = _INT_MAX

    @classmethod
    def default(cls, checkpointing: bool) -> RestartStrategy:
        """Flink's strategy for a job that configures none: ``exponential-delay`` with its
        defaults when checkpointing is enabled, else no restart."""
        return cls("exponential-delay") if checkpointing else cls("disable")

    @classmethod
    def from_settings(cls, settings: Mapping[str, str]) -> RestartStrategy | None:
        """The strategy a configuration's ``restart-strategy.*`` options set (None: they set
        no type, and the job gets :meth:`default`). Options of other types are ignored, as
        in Flink."""
        key = next((key for key in ("restart-strategy.type", "restart-strategy") if key in settings), None)
        if key is None:
            return None
        name = settings[key].strip().lower()
        kind = next((main for main, names in _TYPES.items() if name in names), None)
        if kind is None:
            raise InvalidArgumentError(f"Unknown restart strategy {settings[key]}.")
        if kind == "fixed-delay":
            strategy = cls(
                kind,
                fixed_delay_attempts=option_int(settings, "restart-strategy.fixed-delay.attempts", 1),
                fixed_delay_ms=option_millis(settings, "restart-strategy.fixed-delay.delay", 1_000),
            )
            if strategy.fixed_delay_attempts < 0:
                raise InvalidArgumentError("Maximum number of restart attempts must be at least 0.")
            return strategy
        if kind == "failure-rate":
            prefix = "restart-strategy.failure-rate."
            strategy = cls(
                kind,
                failure_rate_max_failures=option_int(settings, f"{prefix}max-failures-per-interval", 1),
                failure_rate_interval_ms=option_millis(settings, f"{prefix}failure-rate-interval", 60_000),
                failure_rate_delay_ms=option_millis(settings, f"{prefix}delay", 1_000),
            )
            if strategy.failure_rate_max_failures <= 0:
                raise InvalidArgumentError("Maximum number of restart attempts per time unit must be greater than 0.")
            if strategy.failure_rate_interval_ms <= 0:
                raise InvalidArgumentError("Failures interval must be greater than 0 ms.")
            return strategy
        if kind == "exponential-delay":
            prefix = "restart-strategy.exponential-delay."
            strategy = cls(
                kind,
                initial_backoff_ms=option_millis(settings, f"{prefix}initial-backoff", 1_000),
                max_backoff_ms=option_millis(settings, f"{prefix}max-backoff", 60_000),
                backoff_multiplier=option_float(settings, f"{prefix}backoff-multiplier", 1.5),
                reset_backoff_threshold_ms=option_millis(settings, f"{prefix}reset-backoff-threshold", 3_600_000),
                jitter_factor=option_float(settings, f"{prefix}jitter-factor", 0.1),
                attempts_before_reset_backoff=option_int(settings, f"{prefix}attempts-before-reset-backoff", _INT_MAX),
            )
            # Flink's checks of the exponential-delay strategy's arguments, in its words.
            if strategy.backoff_multiplier < 1:
                raise InvalidArgumentError("Backoff multiplier must be at least 1.")
            if not 0 <= strategy.jitter_factor <= 1:
                raise InvalidArgumentError("Jitter factor must be >= 0.0 and <= 1.0.")
            if strategy.initial_backoff_ms < 1:
                raise InvalidArgumentError("Initial backoff must be at least 1.")
            if strategy.max_backoff_ms < 1:
                raise InvalidArgumentError("Maximum backoff must be at least 1.")
            return strategy
        return cls(kind)

    def backoff(self) -> RestartBackoff:
        """A fresh tracker of this strategy, for one run of a job."""
        return RestartBackoff(self)

    def describe(self) -> str:
        """Flink's name of the strategy with its settings (its ``toString``)."""
        if self.type == "fixed-delay":
            return (
                f"FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts={self.fixed_delay_attempts}, "
                f"backoffTimeMS={self.fixed_delay_ms})"
            )
        if self.type == "failure-rate":
            return (
                "FailureRateRestartBackoffTimeStrategy(FailureRateRestartBackoffTimeStrategy(failuresIntervalMS="
                f"{self.failure_rate_interval_ms},backoffTimeMS={self.failure_rate_delay_ms},maxFailuresPerInterval="
                f"{self.failure_rate_max_failures})"
            )
        if self.type == "exponential-delay":
            return (
                f"ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS={self.initial_backoff_ms}, "
                f"maxBackoffMS={self.max_backoff_ms}, backoffMultiplier={self.backoff_multiplier}, "
                f"resetBackoffThresholdMS={self.reset_backoff_threshold_ms}, jitterFactor={self.jitter_factor}, "
                f"attemptsBeforeResetBackoff={self.attempts_before_reset_backoff})"
            )
        return "NoRestartBackoffTimeStrategy"


class RestartBackoff:
    """One run's restart decisions: told of each failure (:meth:`notify_failure`), it says
    whether the job may restart and after how many ms (Flink's ``RestartBackoffTimeStrategy``)."""

    def __init__(self, strategy: RestartStrategy, clock: Callable[[], int] | None = None):
        self.strategy = strategy
        #: Milliseconds now: the wall clock, unless a test gives its own.
        self._now = clock if clock is not None else (lambda: int(time.time() * 1000))
        self._attempts = 0
        self._failures: deque[int] = deque()
        self._next_restart = 0
        self._backoff_ms = 0

    def notify_failure(self) -> None:
        """Count a failure (before :meth:`can_restart` is asked, as Flink does)."""
        strategy, now = self.strategy, self._now()
        if strategy.type == "fixed-delay":
            self._attempts += 1
            self._backoff_ms = strategy.fixed_delay_ms
        elif strategy.type == "failure-rate":
            if len(self._failures) > strategy.failure_rate_max_failures:
                self._failures.popleft()
            self._failures.append(now)
            self._backoff_ms = strategy.failure_rate_delay_ms
        elif strategy.type == "exponential-delay":
            # A job that ran the threshold since its last restart starts again from the
            # initial backoff, and its attempts are counted anew.
            if now - self._next_restart >= strategy.reset_backoff_threshold_ms:
                self._attempts = 0
            self._backoff_ms = self._exponential_backoff()
            self._next_restart = now + self._backoff_ms
            self._attempts += 1

    def _exponential_backoff(self) -> int:
        strategy = self.strategy
        grown = strategy.initial_backoff_ms * strategy.backoff_multiplier**self._attempts
        backoff = min(grown, strategy.max_backoff_ms)
        spread = int(backoff * strategy.jitter_factor)
        jitter = random.randint(-spread, spread) if spread else 0
        return int(max(strategy.initial_backoff_ms, min(backoff + jitter, strategy.max_backoff_ms)))

    def can_restart(self) -> bool:
        strategy = self.strategy
        if strategy.type == "fixed-delay":
            return self._attempts <= strategy.fixed_delay_attempts
        if strategy.type == "failure-rate":
            if len(self._failures) > strategy.failure_rate_max_failures:
                return self._now() - self._failures[0] > strategy.failure_rate_interval_ms
            return True
        if strategy.type == "exponential-delay":
            return self._attempts <= strategy.attempts_before_reset_backoff
        return False

    def backoff_ms(self) -> int:
        """How long to wait before the restart the last failure allows."""
        return self._backoff_ms
