"""A KRaft cluster's metadata, offline: the image a controller or broker holds, built from the
`__cluster_metadata-0` files alone (the latest snapshot plus the log after it, or any one file).

* `source`: the files of a metadata log dir (snapshots, segments), walked in offset order up to any
  point, reading up to the first damage and saying where it is
* `image`: the cluster image (Kafka's `MetadataImage`) and how each record changes it (`MetadataDelta`)
* `text`: the text Kafka's image classes print (`PartitionRegistration.toString()` and the rest)
* `tree`: the metadata shell's path tree and its `ls`, `cat`, `tree`, `find` (Kafka's `MetadataShell`)
* `history`: what changed between two points, and every change to one partition, broker or config
"""
