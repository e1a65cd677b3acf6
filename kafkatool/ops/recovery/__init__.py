"""The steps of `recover` (kafkatool.ops.recover), one module each, along Kafka's LogLoader:

plan          what recover found and will change (the plan objects every step fills in)
cleanup       temporary files and interrupted swaps (removeTempFilesAndCollectSwapFiles)
segments      segment files, orphan indexes, index sanity, which segments to recover (loadSegmentFiles)
truncation    truncation, later segments deleted, rebuilt indexes (recoverLog, LogSegment.recover)
epochs        the leader-epoch cache after a load (LeaderEpochFileCache)
snapshots     producer-state snapshots past the log end or corrupt
checkpoints   the log dir's recovery-point, replication and cleaner checkpoints
execute       applying a real run's plan, crash-safe at every step

`kafkatool.ops.recover` runs them in order (and walks the segments itself) and is what callers import.
"""
