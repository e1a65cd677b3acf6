"""Raw segments on any storage, cut into slices and read: what both `spark-scan` engines share.

Pure Python (no pyspark), below both engines so neither imports the other: the single-process
engine `kafkatool.ops.scan` and the Spark one `kafkatool.spark` plan, read and define their rows here.
  storage   byte-range reads through pyarrow.fs (local, HDFS, S3, GCS; fsspec for the rest)
  planning  segment discovery, slices on batch boundaries (.index or header walk), filter pruning
  reading   the batch walk of one slice, with filters and the corruption policy
  rows      the queries, their columns and the definitions both engines follow
"""
