"""Raw Kafka segments at scale: the `kafka-log` PySpark data source and the `spark-scan` queries.

Pure Python (no pyspark import), shared with the single-process scanner `kafkatool.ops.scan`:
  storage   byte-range reads through pyarrow.fs (local, HDFS, S3, GCS; fsspec for the rest)
  planning  segment discovery, slices on batch boundaries (.index or header walk), filter pruning
  reading   the batch walk of one slice, with filters and the corruption policy

PySpark (imported only by these modules, which the CLI imports lazily):
  datasource  the `kafka-log` DataSource (`register(spark)`)
  queries     summary, top keys, timeline as DataFrames, and the SQL views
  session     start/reuse a SparkSession, follow its jobs, explain its failures in one line
"""
