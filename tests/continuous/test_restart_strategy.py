"""Flink's restart strategies: their options, defaults and decisions (no Spark needed)."""

from __future__ import annotations

import re

import pytest

import flowmagic
from flowmagic.errors import InvalidArgumentError
from flowmagic.vocabulary.configuration import Configuration
from flowmagic.vocabulary.restart_strategy import RestartBackoff, RestartStrategy


class _Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def _configured(**options: str) -> RestartStrategy | None:
    config = Configuration()
    for key, value in options.items():
        config.set_string(key, value)
    env = flowmagic.StreamExecutionEnvironment.get_execution_environment(config)
    return env.continuous_options().restart_strategy


def test_flinks_default_is_exponential_delay_with_checkpointing_and_none_without() -> None:
    assert RestartStrategy.default(checkpointing=True) == RestartStrategy("exponential-delay")
    assert RestartStrategy.default(checkpointing=False).type == "disable"
    assert _configured() is None
    defaults = RestartStrategy("exponential-delay")
    assert (defaults.initial_backoff_ms, defaults.max_backoff_ms, defaults.backoff_multiplier) == (1_000, 60_000, 1.5)
    assert (defaults.reset_backoff_threshold_ms, defaults.jitter_factor) == (3_600_000, 0.1)
    assert defaults.attempts_before_reset_backoff == 2**31 - 1


def test_options_are_read_by_flinks_keys_and_names() -> None:
    strategy = _configured(
        **{
            "restart-strategy.type": "fixeddelay",
            "restart-strategy.fixed-delay.attempts": "3",
            "restart-strategy.fixed-delay.delay": "10 s",
            "restart-strategy.failure-rate.delay": "5 s",
        }
    )
    assert strategy == RestartStrategy("fixed-delay", fixed_delay_attempts=3, fixed_delay_ms=10_000)
    assert _configured(**{"restart-strategy": "off"}) == RestartStrategy("disable")
    rate = _configured(
        **{
            "restart-strategy.type": "failure-rate",
            "restart-strategy.failure-rate.max-failures-per-interval": "2",
            "restart-strategy.failure-rate.failure-rate-interval": "1 min",
        }
    )
    assert rate is not None and (rate.failure_rate_max_failures, rate.failure_rate_interval_ms) == (2, 60_000)
    with pytest.raises(InvalidArgumentError, match=re.escape("Unknown restart strategy sometimes.")):
        _configured(**{"restart-strategy.type": "sometimes"})
    with pytest.raises(
        InvalidArgumentError,
        match=re.escape("Could not parse value 'three' for key 'restart-strategy.fixed-delay.attempts'."),
    ):
        _configured(**{"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "three"})
    with pytest.raises(InvalidArgumentError, match=re.escape("Jitter factor must be >= 0.0 and <= 1.0.")):
        _configured(
            **{"restart-strategy.type": "exponential-delay", "restart-strategy.exponential-delay.jitter-factor": "2"}
        )


def test_fixed_delay_allows_its_attempts() -> None:
    backoff = RestartStrategy("fixed-delay", fixed_delay_attempts=2, fixed_delay_ms=500).backoff()
    decisions = []
    for _ in range(3):
        backoff.notify_failure()
        decisions.append((backoff.can_restart(), backoff.backoff_ms()))
    assert decisions == [(True, 500), (True, 500), (False, 500)]
    assert RestartStrategy("disable").backoff().can_restart() is False


def test_failure_rate_fails_when_more_failures_than_allowed_come_within_the_interval() -> None:
    clock = _Clock()
    backoff = RestartBackoff(
        RestartStrategy("failure-rate", failure_rate_max_failures=2, failure_rate_interval_ms=10_000), clock
    )
    allowed = []
    for step in (0, 1_000, 20_000, 1_000, 1_000):
        clock.now += step
        backoff.notify_failure()
        allowed.append(backoff.can_restart())
    # Two failures in 10 s are allowed, a third within them is not; spread out they are.
    assert allowed == [True, True, True, True, False]


def test_exponential_delay_grows_to_its_maximum_and_resets_after_the_threshold() -> None:
    clock = _Clock()
    strategy = RestartStrategy(
        "exponential-delay",
        initial_backoff_ms=100,
        max_backoff_ms=1_000,
        backoff_multiplier=2.0,
        reset_backoff_threshold_ms=60_000,
        jitter_factor=0.0,
        attempts_before_reset_backoff=6,
    )
    backoff = RestartBackoff(strategy, clock)
    delays = []
    for _ in range(6):
        backoff.notify_failure()
        assert backoff.can_restart()
        delays.append(backoff.backoff_ms())
        clock.now += backoff.backoff_ms() + 10
    assert delays == [100, 200, 400, 800, 1_000, 1_000]
    backoff.notify_failure()
    assert not backoff.can_restart()
    # After running the threshold without failure, it starts over.
    clock.now += 120_000
    backoff.notify_failure()
    assert backoff.can_restart() and backoff.backoff_ms() == 100


def test_jitter_stays_within_its_share_of_the_backoff() -> None:
    strategy = RestartStrategy("exponential-delay", initial_backoff_ms=1_000, jitter_factor=0.1)
    for _ in range(50):
        backoff = strategy.backoff()
        backoff.notify_failure()
        assert 1_000 <= backoff.backoff_ms() <= 1_100
