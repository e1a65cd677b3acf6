"""Raw Kafka segments at scale: the `kafka-log` PySpark data source and the `spark-scan` queries.

Planning, reading and the rows' definitions are shared with the single-process engine
(`kafkatool.ops.scan`) through `kafkatool.slices`, pure Python below both.

PySpark (imported only by these modules, which the CLI imports lazily):
  datasource  the `kafka-log` DataSource (`register(spark)`)
  queries     summary, top keys, timeline as DataFrames, and the SQL views
  session     start/reuse a SparkSession, follow its jobs, explain its failures in one line
"""
