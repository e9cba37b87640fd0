"""State time-to-live: PyFlink's ``StateTtlConfig``, its builder and its cleanup strategies.

A keyed state's descriptor given ``enable_time_to_live(config)`` keeps each value with the
processing time it was last written (or read, with ``OnReadAndWrite``); a value older than
``ttl`` is expired. As in Flink, the time is processing time only, and in flowmagic it is the
task's clock: the wall clock in a bounded job, the epoch's logged time in a continuous one.
"""

from __future__ import annotations

import enum

from flowmagic.errors import InvalidArgumentError, InvalidTypeError
from flowmagic.vocabulary.time import Duration, Time

__all__ = ["StateTtlConfig"]


class _UpdateType(enum.Enum):
    """When a value's timestamp is renewed (which prolongs its life)."""

    Disabled = 0
    OnCreateAndWrite = 1
    OnReadAndWrite = 2


class _StateVisibility(enum.Enum):
    """Whether a value that expired but is still stored may be returned."""

    ReturnExpiredIfNotCleanedUp = 0
    NeverReturnExpired = 1


class _TtlTimeCharacteristic(enum.Enum):
    """The time TTL is measured in: processing time only, as in Flink."""

    ProcessingTime = 0


class _Strategies(enum.Enum):
    FULL_STATE_SCAN_SNAPSHOT = 0
    INCREMENTAL_CLEANUP = 1
    ROCKSDB_COMPACTION_FILTER = 2


class _CleanupStrategy:
    """Base of the cleanup strategies' settings."""


class _EmptyCleanupStrategy(_CleanupStrategy):
    """A strategy without settings (cleanup in full snapshots)."""


class _IncrementalCleanupStrategy(_CleanupStrategy):
    """Check ``cleanup_size`` keys for expired values on every state access (and on every
    record if ``run_cleanup_for_every_record``)."""

    def __init__(self, cleanup_size: int, run_cleanup_for_every_record: bool):
        if isinstance(cleanup_size, bool) or not isinstance(cleanup_size, int) or cleanup_size <= 0:
            raise InvalidArgumentError(
                f"Number of incrementally cleaned up state entries should be positive, got {cleanup_size!r}."
            )
        self._cleanup_size = cleanup_size
        self._run_cleanup_for_every_record = bool(run_cleanup_for_every_record)

    def get_cleanup_size(self) -> int:
        return self._cleanup_size

    def run_cleanup_for_every_record(self) -> bool:
        return self._run_cleanup_for_every_record


class _RocksdbCompactFilterCleanupStrategy(_CleanupStrategy):
    """RocksDB's compaction filter; flowmagic keeps state on the heap, where Flink ignores it."""

    def __init__(self, query_time_after_num_entries: int, periodic_compaction_time: Duration | None = None):
        self._query_time_after_num_entries = query_time_after_num_entries
        self._periodic_compaction_time = periodic_compaction_time or Duration.of_days(30)

    def get_query_time_after_num_entries(self) -> int:
        return self._query_time_after_num_entries

    def get_periodic_compaction_time(self) -> Duration:
        return self._periodic_compaction_time


class _CleanupStrategies:
    """When expired values are removed besides on read: in full snapshots, incrementally on
    access, or (RocksDB only) on compaction; incremental cleanup of 5 keys by default."""

    Strategies = _Strategies
    CleanupStrategy = _CleanupStrategy
    EmptyCleanupStrategy = _EmptyCleanupStrategy
    IncrementalCleanupStrategy = _IncrementalCleanupStrategy
    RocksdbCompactFilterCleanupStrategy = _RocksdbCompactFilterCleanupStrategy
    EMPTY_STRATEGY = _EmptyCleanupStrategy()

    def __init__(self, strategies: dict[_Strategies, _CleanupStrategy], is_cleanup_in_background: bool):
        self._strategies = dict(strategies)
        self._is_cleanup_in_background = is_cleanup_in_background

    def is_cleanup_in_background(self) -> bool:
        return self._is_cleanup_in_background

    def in_full_snapshot(self) -> bool:
        return _Strategies.FULL_STATE_SCAN_SNAPSHOT in self._strategies

    def get_incremental_cleanup_strategy(self) -> _IncrementalCleanupStrategy | None:
        default = _IncrementalCleanupStrategy(5, False) if self._is_cleanup_in_background else None
        strategy = self._strategies.get(_Strategies.INCREMENTAL_CLEANUP, default)
        return strategy if isinstance(strategy, _IncrementalCleanupStrategy) else None

    def get_rocksdb_compact_filter_cleanup_strategy(self) -> _RocksdbCompactFilterCleanupStrategy | None:
        default = _RocksdbCompactFilterCleanupStrategy(1000) if self._is_cleanup_in_background else None
        strategy = self._strategies.get(_Strategies.ROCKSDB_COMPACTION_FILTER, default)
        return strategy if isinstance(strategy, _RocksdbCompactFilterCleanupStrategy) else None


class _Builder:
    """``StateTtlConfig.new_builder(ttl)``: OnCreateAndWrite, NeverReturnExpired, processing
    time and cleanup in background unless set otherwise."""

    def __init__(self, ttl: Time):
        self._ttl = _check_ttl(ttl)
        self._update_type = _UpdateType.OnCreateAndWrite
        self._state_visibility = _StateVisibility.NeverReturnExpired
        self._ttl_time_characteristic = _TtlTimeCharacteristic.ProcessingTime
        self._is_cleanup_in_background = True
        self._strategies: dict[_Strategies, _CleanupStrategy] = {}

    def set_update_type(self, update_type: _UpdateType) -> _Builder:
        self._update_type = _UpdateType(update_type)
        return self

    def update_ttl_on_create_and_write(self) -> _Builder:
        return self.set_update_type(_UpdateType.OnCreateAndWrite)

    def update_ttl_on_read_and_write(self) -> _Builder:
        return self.set_update_type(_UpdateType.OnReadAndWrite)

    def set_state_visibility(self, state_visibility: _StateVisibility) -> _Builder:
        self._state_visibility = _StateVisibility(state_visibility)
        return self

    def return_expired_if_not_cleaned_up(self) -> _Builder:
        return self.set_state_visibility(_StateVisibility.ReturnExpiredIfNotCleanedUp)

    def never_return_expired(self) -> _Builder:
        return self.set_state_visibility(_StateVisibility.NeverReturnExpired)

    def set_ttl_time_characteristic(self, ttl_time_characteristic: _TtlTimeCharacteristic) -> _Builder:
        self._ttl_time_characteristic = _TtlTimeCharacteristic(ttl_time_characteristic)
        return self

    def use_processing_time(self) -> _Builder:
        return self.set_ttl_time_characteristic(_TtlTimeCharacteristic.ProcessingTime)

    def cleanup_full_snapshot(self) -> _Builder:
        """Leave expired values out of snapshots (checkpoints and savepoints)."""
        self._strategies[_Strategies.FULL_STATE_SCAN_SNAPSHOT] = _CleanupStrategies.EMPTY_STRATEGY
        return self

    def cleanup_incrementally(self, cleanup_size: int, run_cleanup_for_every_record: bool) -> _Builder:
        """On every access of the state (and every record, if asked), check the next
        ``cleanup_size`` keys of the state for expired values and remove those."""
        self._strategies[_Strategies.INCREMENTAL_CLEANUP] = _IncrementalCleanupStrategy(
            cleanup_size, run_cleanup_for_every_record
        )
        return self

    def cleanup_in_rocksdb_compact_filter(
        self, query_time_after_num_entries: int, periodic_compaction_time: Duration | None = None
    ) -> _Builder:
        """Accepted as Flink's heap state backend accepts it: without effect."""
        self._strategies[_Strategies.ROCKSDB_COMPACTION_FILTER] = _RocksdbCompactFilterCleanupStrategy(
            query_time_after_num_entries, periodic_compaction_time
        )
        return self

    def disable_cleanup_in_background(self) -> _Builder:
        """No default incremental cleanup (a strategy set explicitly still applies)."""
        self._is_cleanup_in_background = False
        return self

    def set_ttl(self, ttl: Time) -> _Builder:
        self._ttl = _check_ttl(ttl)
        return self

    def build(self) -> StateTtlConfig:
        return StateTtlConfig(
            self._update_type,
            self._state_visibility,
            self._ttl_time_characteristic,
            self._ttl,
            _CleanupStrategies(self._strategies, self._is_cleanup_in_background),
        )


def _check_ttl(ttl: Duration) -> Duration:
    if not isinstance(ttl, Duration):
        raise InvalidTypeError(f"StateTtlConfig expects a Time (Time.seconds(1) ...), got {ttl!r}.")
    if ttl.to_milliseconds() <= 0:
        raise InvalidArgumentError("TTL is expected to be positive.")
    return ttl


class StateTtlConfig:
    """Time-to-live of keyed state: ``StateTtlConfig.new_builder(Time.seconds(1))
    .set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite).build()``."""

    UpdateType = _UpdateType
    StateVisibility = _StateVisibility
    TtlTimeCharacteristic = _TtlTimeCharacteristic
    CleanupStrategies = _CleanupStrategies
    Builder = _Builder

    def __init__(
        self,
        update_type: _UpdateType,
        state_visibility: _StateVisibility,
        ttl_time_characteristic: _TtlTimeCharacteristic,
        ttl: Duration,
        cleanup_strategies: _CleanupStrategies,
    ):
        self._update_type = _UpdateType(update_type)
        self._state_visibility = _StateVisibility(state_visibility)
        self._ttl_time_characteristic = _TtlTimeCharacteristic(ttl_time_characteristic)
        self._ttl = _check_ttl(ttl)
        self._cleanup_strategies = cleanup_strategies

    @staticmethod
    def new_builder(ttl: Time) -> _Builder:
        return _Builder(ttl)

    def get_update_type(self) -> _UpdateType:
        return self._update_type

    def get_state_visibility(self) -> _StateVisibility:
        return self._state_visibility

    def get_ttl(self) -> Duration:
        return self._ttl

    def get_ttl_time_characteristic(self) -> _TtlTimeCharacteristic:
        return self._ttl_time_characteristic

    def is_enabled(self) -> bool:
        return self._update_type is not _UpdateType.Disabled

    def get_cleanup_strategies(self) -> _CleanupStrategies:
        return self._cleanup_strategies

    def __repr__(self) -> str:
        return (
            f"StateTtlConfig<update_type={self._update_type}, state_visibility={self._state_visibility},"
            f"ttl_time_characteristic ={self._ttl_time_characteristic},ttl={self._ttl}>"
        )
